import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chunkResult,
  CHUNK_FLAG_FIRST,
  CHUNK_FLAG_LAST,
  CHUNK_PAYLOAD,
  chunkFlags,
  chunkSeq,
  copyChunkPayload,
  decodeChunk,
  decodeCommand,
  decodeDeviceInfo,
  decodeResult,
  encodeCaptureParams,
  decodeCaptureParams,
  encodeChunk,
  encodeCommand,
  encodeDeviceInfo,
  encodeResult,
  REPORT_SIZE,
  type IrisResult,
} from '../../../../drivers/iris-hid/protocol.js';

const resultArb = fc
  .record({
    width: fc.integer({ min: 1, max: 40 }),
    height: fc.integer({ min: 1, max: 30 }),
    tag: fc.integer({ min: 0, max: 255 }),
    kind: fc.constantFrom(2, 3, 7),
    quality: fc.integer({ min: 0, max: 100 }),
    seed: fc.nat(),
  })
  .map(
    (r): IrisResult => ({
      tag: r.tag,
      kind: r.kind,
      quality: r.quality,
      width: r.width,
      height: r.height,
      pupilX: 10,
      pupilY: 11,
      irisRadius: 12,
      flags: 1,
      captureMs: 1234,
      pixels: Uint8Array.from({ length: r.width * r.height }, (_, i) => (i * 31 + r.seed) & 0xff),
    }),
  );

describe('iris HID protocol', () => {
  it('lays out reports of 64 bytes with the documented offsets', () => {
    const cmd = encodeCommand(0x10, 7, encodeCaptureParams({ kind: 3, width: 320, height: 240, timeoutMs: 3000, minQuality: 50 }));
    expect(cmd.length).toBe(REPORT_SIZE);
    expect(Buffer.from(cmd.subarray(0, 12)).toString('hex')).toBe('01100708034001f000b80b32');
    const back = decodeCommand(cmd);
    expect(back).toMatchObject({ command: 0x10, tag: 7 });
    expect(decodeCaptureParams(back.params)).toEqual({ kind: 3, width: 320, height: 240, timeoutMs: 3000, minQuality: 50 });
    const info = {
      protocolVersion: 1,
      model: 'SIM-IRIS-1',
      firmware: '1.0.0',
      serial: 'IRS0000001',
      sensorWidth: 640,
      sensorHeight: 480,
      ppi: 460,
      capabilities: 3,
    };
    const rep = encodeDeviceInfo(info);
    expect(rep.length).toBe(REPORT_SIZE);
    expect(rep[0]).toBe(0x02);
    expect(rep.readUInt16LE(42)).toBe(640);
    expect(decodeDeviceInfo(rep)).toEqual(info);
  });

  it('chunks any result into numbered reports and reassembles it, CRC checked', () => {
    fc.assert(
      fc.property(resultArb, (r) => {
        const msg = encodeResult(r);
        const reports = chunkResult(msg);
        expect(reports.every((x) => x.length === REPORT_SIZE && x[0] === 0x10 && x[1] === 0x02)).toBe(true);
        // Byte for byte what encodeChunk makes of each slice of the message.
        const flagsOf = (i: number) => (i === 0 ? CHUNK_FLAG_FIRST : 0) | (i === reports.length - 1 ? CHUNK_FLAG_LAST : 0);
        const oneByOne = reports.map((_, i) => encodeChunk(i, flagsOf(i), msg.subarray(i * CHUNK_PAYLOAD, (i + 1) * CHUNK_PAYLOAD)));
        expect(Buffer.concat(reports).equals(Buffer.concat(oneByOne))).toBe(true);
        const chunks = reports.map((x) => decodeChunk(x.subarray(1)));
        expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
        expect(chunks[0]!.flags & CHUNK_FLAG_FIRST).toBeTruthy();
        expect(chunks.at(-1)!.flags & CHUNK_FLAG_LAST).toBeTruthy();
        const joined = Buffer.concat(chunks.map((c) => c.payload)).subarray(0, msg.length);
        expect(decodeResult(joined)).toEqual(r);
        expect(reports.length).toBe(Math.ceil(msg.length / CHUNK_PAYLOAD));
      }),
      { numRuns: 150 },
    );
  });

  it('reads a chunk in place as decodeChunk does, whatever the report, short ones included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 5, maxLength: 80 }), fc.nat(3 * CHUNK_PAYLOAD), (bytes, offset) => {
        const body = Buffer.from(bytes);
        const c = decodeChunk(body);
        expect(chunkSeq(body)).toBe(c.seq);
        expect(chunkFlags(body)).toBe(c.flags);
        const target = new Uint8Array(offset + CHUNK_PAYLOAD + 8).fill(0xee);
        expect(copyChunkPayload(body, target, offset)).toBe(c.payload.length);
        const expected = new Uint8Array(target.length).fill(0xee);
        expected.set(c.payload, offset);
        expect(target).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a result with any flipped bit with DRIVER_CHECKSUM (or a frame error in the header)', () => {
    fc.assert(
      fc.property(resultArb, fc.nat(), (r, pick) => {
        const msg = Buffer.from(encodeResult(r));
        const bit = 32 + (pick % ((msg.length - 4) * 8));
        msg[bit >> 3]! ^= 1 << (bit & 7);
        expect(() => decodeResult(msg)).toThrow(expect.objectContaining({ code: expect.stringMatching(/^DRIVER_(CHECKSUM|FRAME)$/) }));
      }),
      { numRuns: 150 },
    );
  });

  it('refuses a header announcing more pixels than 640×480, or not width × height, before any buffer is sized from it', async () => {
    const { readResultHeader, MAX_RESULT_PIXELS } = await import('../../../../drivers/iris-hid/protocol.js');
    expect(MAX_RESULT_PIXELS).toBe(640 * 480);
    const r: IrisResult = {
      tag: 4,
      kind: 3,
      quality: 1,
      width: 320,
      height: 240,
      pupilX: 0,
      pupilY: 0,
      irisRadius: 0,
      flags: 0,
      captureMs: 0,
      pixels: new Uint8Array(320 * 240),
    };
    const msg = Buffer.from(encodeResult(r));
    expect(readResultHeader(msg)).toEqual({ tag: 4, kind: 3, width: 320, height: 240, pixelBytes: 76_800, total: 32 + 76_800 + 4 });
    expect(readResultHeader(Buffer.from('NOPE'.padEnd(40, '\0')))).toBeNull();
    for (const n of [0xfffffff0, 0x7fffffff, 640 * 480 + 1, 76_799]) {
      const bad = Buffer.from(msg);
      bad.writeUInt32LE(n, 24);
      expect(() => readResultHeader(bad)).toThrow(expect.objectContaining({ code: 'DRIVER_FRAME' }));
      expect(() => decodeResult(bad)).toThrow(expect.objectContaining({ code: 'DRIVER_FRAME' }));
    }
  });
});

describe('iris transfer floor', () => {
  it('is one report per interval', async () => {
    const { resultReports, irisTransferFloorMs } = await import('../../../../drivers/iris-hid/protocol.js');
    expect(resultReports(640, 480)).toBe(5208);
    expect(resultReports(320, 240)).toBe(1303);
    expect(irisTransferFloorMs(640, 480)).toBe(5208);
    expect(irisTransferFloorMs(320, 240, 0.125)).toBeCloseTo(162.875, 6);
  });
});
