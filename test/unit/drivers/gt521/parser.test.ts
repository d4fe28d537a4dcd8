import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeData, encodePacket, type Gt521DataPacket, type Gt521Packet } from '../../../../drivers/gt521/codec.js';
import { Gt521Parser } from '../../../../drivers/gt521/parser.js';

type Frame = { kind: 'packet'; packet: Gt521Packet } | { kind: 'data'; data: number[] };

const packetArb = fc.record({
  deviceId: fc.integer({ min: 0, max: 0xffff }),
  parameter: fc.integer({ min: 0, max: 0xffffffff }),
  code: fc.integer({ min: 0, max: 0xffff }),
});

function framesArb(dataLength: number) {
  return fc.array(
    fc.oneof(
      packetArb.map((packet): Frame => ({ kind: 'packet', packet })),
      fc
        .array(fc.integer({ min: 0, max: 255 }), { minLength: dataLength, maxLength: dataLength })
        .map((data): Frame => ({ kind: 'data', data })),
    ),
    { minLength: 1, maxLength: 12 },
  );
}

function encodeFrame(f: Frame): Buffer {
  return f.kind === 'packet' ? encodePacket(f.packet) : encodeData(Uint8Array.from(f.data), 1);
}

/** Splits `bytes` at the given cut points (any order, any count). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

function run(chunks: Buffer[], dataLength: number) {
  const got: Frame[] = [];
  const errors: string[] = [];
  const parser: Gt521Parser = new Gt521Parser({
    packet: (packet: Gt521Packet) => {
      got.push({ kind: 'packet', packet });
    },
    data: (d: Gt521DataPacket) => {
      got.push({ kind: 'data', data: [...d.data] });
      // Every data packet is followed by the same expectation (as if each were announced).
      parser.expectedDataLength = dataLength;
    },
    error: (e) => errors.push(e.code),
  });
  parser.expectedDataLength = dataLength;
  for (const c of chunks) parser.push(c);
  return { got, errors, parser };
}

// Garbage that holds no first byte of a start code, so it can never begin a frame.
const garbageArb = fc.uint8Array({ maxLength: 40 }).map((g) => Buffer.from(g.filter((b) => b !== 0x55 && b !== 0x5a)));

describe('GT-521 stream parser', () => {
  it('parses back any frames, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600 }).chain((len) => fc.tuple(fc.constant(len), framesArb(len), fc.array(fc.nat(), { maxLength: 30 }))),
        ([len, frames, cuts]) => {
          const bytes = Buffer.concat(frames.map(encodeFrame));
          const { got, errors, parser } = run(split(bytes, cuts), len);
          expect(errors).toEqual([]);
          expect(got).toEqual(frames);
          expect(parser.garbageBytes).toBe(0);
          expect(parser.inFrame).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('skips garbage between frames and recovers every frame', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: 64 })
          .chain((len) =>
            fc.tuple(
              fc.constant(len),
              framesArb(len),
              fc.array(garbageArb, { minLength: 13, maxLength: 13 }),
              fc.array(fc.nat(), { maxLength: 20 }),
            ),
          ),
        ([len, frames, garbage, cuts]) => {
          const parts: Buffer[] = [];
          frames.forEach((f, i) => {
            parts.push(garbage[i]!, encodeFrame(f));
          });
          parts.push(garbage[12]!);
          const { got, errors, parser } = run(split(Buffer.concat(parts), cuts), len);
          expect(errors).toEqual([]);
          expect(got).toEqual(frames);
          const garbageTotal = garbage.slice(0, frames.length).reduce((n, g) => n + g.length, 0);
          // Trailing garbage is counted once the byte after it is seen; the last byte may be pending.
          expect(parser.garbageBytes).toBeGreaterThanOrEqual(garbageTotal);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejects a frame with a flipped bit and still finds the frames around it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }).chain((len) =>
          fc.tuple(
            fc.constant(len),
            framesArb(len).filter((f) => f.length >= 2),
            fc.nat(),
            fc.nat(),
            fc.array(fc.nat(), { maxLength: 20 }),
          ),
        ),
        ([len, frames, which, bitPick, cuts]) => {
          const victim = which % frames.length;
          const encoded = frames.map(encodeFrame);
          const v = Buffer.from(encoded[victim]!);
          // Flip a bit after the start code (a flipped start code is just garbage).
          const bit = 16 + (bitPick % ((v.length - 2) * 8));
          v[bit >> 3]! ^= 1 << (bit & 7);
          encoded[victim] = v;
          const { got, errors } = run(split(Buffer.concat(encoded), cuts), len);
          const expected = frames.filter((_, i) => i !== victim);
          // The damaged frame is never delivered, every other one is, in order.
          expect(got).toEqual(expected);
          expect(errors.length).toBeGreaterThanOrEqual(1);
          expect(new Set(errors)).toEqual(new Set(['DRIVER_CHECKSUM']));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds a real frame behind a false start code in the garbage', () => {
    const real = encodePacket({ parameter: 7, code: 0x30 });
    const chunks = [Buffer.from([0x00, 0x55, 0xaa, 0x01, 0x02]), real];
    const { got, errors, parser } = run(chunks, 0);
    expect(got).toEqual([{ kind: 'packet', packet: { deviceId: 1, parameter: 7, code: 0x30 } }]);
    expect(errors).toEqual(['DRIVER_CHECKSUM']);
    expect(parser.badFrames).toBe(1);
  });

  it('treats a data start code as garbage when no data is expected', () => {
    const got: unknown[] = [];
    const parser = new Gt521Parser({ packet: (p) => got.push(p), data: (d) => got.push(d), error: () => got.push('error') });
    parser.push(Buffer.concat([encodeData(Buffer.from([1, 2, 3])), encodePacket({ code: 0x30 })]));
    expect(got).toEqual([{ deviceId: 1, parameter: 0, code: 0x30 }]);
    expect(parser.garbageBytes).toBe(9);
  });
});
