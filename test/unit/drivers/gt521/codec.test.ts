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
