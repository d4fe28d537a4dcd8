import { describe, expect, it } from 'vitest';
import { checksum16, decodeData, decodePacket, encodeData, encodePacket } from '../../../../drivers/gt521/codec.js';
import { ACK, Gt521Command } from '../../../../drivers/gt521/protocol.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').match(/../g)!.join(' ');

describe('GT-521 codec', () => {
  it('encodes the packets of the programming guide byte for byte', () => {
    expect(hex(encodePacket({ code: Gt521Command.Open }))).toBe('55 aa 01 00 00 00 00 00 01 00 01 01');
    expect(hex(encodePacket({ code: Gt521Command.CmosLed, parameter: 1 }))).toBe('55 aa 01 00 01 00 00 00 12 00 13 01');
    expect(hex(encodePacket({ code: ACK }))).toBe('55 aa 01 00 00 00 00 00 30 00 30 01');
  });

  it('puts parameters little-endian and sums every byte before the checksum', () => {
    const p = encodePacket({ code: Gt521Command.ChangeBaud, parameter: 115200 });
    expect(p.readUInt32LE(4)).toBe(115200);
    expect(p.readUInt16LE(10)).toBe(checksum16(p, 0, 10));
    expect(decodePacket(p)).toEqual({ deviceId: 1, parameter: 115200, code: Gt521Command.ChangeBaud });
  });

  it('round-trips data packets and checks their checksum', () => {
    const payload = Buffer.from([1, 2, 3, 0xff, 0xfe]);
    const d = encodeData(payload);
    expect(hex(d.subarray(0, 4))).toBe('5a a5 01 00');
    expect(d.readUInt16LE(d.length - 2)).toBe((0x5a + 0xa5 + 1 + 1 + 2 + 3 + 0xff + 0xfe) & 0xffff);
    expect(decodeData(d).data).toEqual(payload);
    const bad = Buffer.from(d);
    bad[5]! ^= 0x01;
    expect(() => decodeData(bad)).toThrow(expect.objectContaining({ code: 'DRIVER_CHECKSUM' }));
  });

  it('rejects a packet with a wrong checksum or start code', () => {
    const p = encodePacket({ code: Gt521Command.Identify });
    const bad = Buffer.from(p);
    bad[11]! ^= 0x80;
    expect(() => decodePacket(bad)).toThrow(expect.objectContaining({ code: 'DRIVER_CHECKSUM', retryable: true }));
    expect(() => decodePacket(Buffer.concat([Buffer.from([0x55, 0xab]), p.subarray(2)]))).toThrow(
      expect.objectContaining({ code: 'DRIVER_FRAME' }),
    );
  });
});

describe('GT-521 link floors', () => {
  it('counts the bytes of a bulk exchange both ways', async () => {
    const { gt521WireBytes, gt521FloorMs } = await import('../../../../drivers/gt521/driver.js');
    // Command 12 + ACK 12 + data 6 + 52116.
    expect(gt521WireBytes('GetImage')).toBe(12 + 12 + 6 + 52116);
    // Command 12 + ACK 12 + host data 504 + final ACK 12.
    expect(gt521WireBytes('SetTemplate')).toBe(12 + 12 + 504 + 12);
    expect(gt521FloorMs('GetTemplate', 115200)).toBeCloseTo(((12 + 12 + 504) * 10 * 1000) / 115200, 6);
  });
});

describe('GT-521 NACK errors', () => {
  it('gives every NACK code its own named error with the device number, name and a hint', async () => {
    const { Gt521NackError } = await import('../../../../drivers/gt521/errors.js');
    const { NACK_CODES } = await import('../../../../drivers/gt521/protocol.js');
    const codes = new Set<string>();
    for (const [num, info] of Object.entries(NACK_CODES)) {
      const err = new Gt521NackError(Number(num), Gt521Command.Verify);
      expect(err.code).toBe(`DRIVER_GT521_${info.name.replace(/^NACK_/, '')}`);
      expect(err.context).toMatchObject({ family: 'gt521', command: 'Verify', deviceCode: Number(num), deviceName: info.name });
      expect(err.hint).toBeTruthy();
      codes.add(err.code);
    }
    expect(codes.size).toBe(18);
    const dup = new Gt521NackError(42, Gt521Command.Enroll3);
    expect(dup).toMatchObject({ code: 'DRIVER_GT521_DUPLICATE', context: { duplicateOf: 42, command: 'Enroll3' } });
    expect(new Gt521NackError(0x2000, Gt521Command.Open).code).toBe('DRIVER_GT521_UNKNOWN_NACK');
  });
});
