import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  IRIS_CODE_BYTES,
  IRIS_TEMPLATE_BYTES,
  createIrisCode,
  decodeIrisTemplate,
  encodeIrisTemplate,
  getBit,
  irisBitIndex,
  isIrisTemplate,
  validBitCount,
  type IrisCode,
} from '../../../../src/biometrics/iris/iris-code.js';
import { AgentError } from '../../../../src/core/errors.js';

const arbCode = fc
  .record({
    code: fc.uint8Array({ minLength: IRIS_CODE_BYTES, maxLength: IRIS_CODE_BYTES }),
    mask: fc.uint8Array({ minLength: IRIS_CODE_BYTES, maxLength: IRIS_CODE_BYTES }),
    quality: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(255)),
  })
  .map((r): IrisCode => ({ version: 1, rings: 8, angles: 128, ...r }));

function malformedAt(bytes: Uint8Array): number {
  try {
    decodeIrisTemplate(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('BIOMETRICS_TEMPLATE_MALFORMED');
    expect((err as AgentError).message).toContain(`byte ${(err as AgentError).context.offset}`);
    return (err as AgentError).context.offset as number;
  }
  throw new Error('decoded a malformed template');
}

describe('iris code layout', () => {
  it('puts bit (ring, angle, k) at (angle·8 + ring)·2 + k, least significant bit first', () => {
    expect(irisBitIndex(0, 0, 0)).toBe(0);
    expect(irisBitIndex(7, 0, 1)).toBe(15);
    expect(irisBitIndex(0, 1, 0)).toBe(16);
    const c = createIrisCode(
      (ring, angle, k) => ring === 3 && angle === 5 && k === 1,
      (ring, angle) => angle !== 127 || ring > 3,
    );
    const i = (5 * 8 + 3) * 2 + 1;
    expect(c.code[i >> 3]).toBe(1 << (i & 7));
    expect(c.code.reduce((a, b) => a + b, 0)).toBe(1 << (i & 7));
    expect(getBit(c.mask, irisBitIndex(2, 127, 0))).toBe(0);
    expect(getBit(c.mask, irisBitIndex(4, 127, 1))).toBe(1);
    expect(validBitCount(c)).toBe(2048 - 8);
  });
  it('one angular position is exactly two bytes', () => {
    const c = createIrisCode((_r, angle) => angle === 1);
    expect(Array.from(c.code.subarray(0, 6))).toEqual([0, 0, 0xff, 0xff, 0, 0]);
  });
});

describe('iris template codec', () => {
  it('round-trips every code, mask and quality', () => {
    fc.assert(
      fc.property(arbCode, (c) => {
        const bytes = encodeIrisTemplate(c);
        expect(bytes.length).toBe(IRIS_TEMPLATE_BYTES);
        expect(isIrisTemplate(bytes)).toBe(true);
        const back = decodeIrisTemplate(bytes);
        expect(back).toEqual(c);
        expect(encodeIrisTemplate(back)).toEqual(bytes);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses malformed input with the offset of the problem', () => {
    const good = encodeIrisTemplate(
      createIrisCode(
        (r, a, k) => (r + a + k) % 3 === 0,
        () => true,
        80,
      ),
    );
    const patched = (offset: number, value: number) => {
      const b = good.slice();
      b[offset] = value;
      return b;
    };
    expect(malformedAt(new Uint8Array(0))).toBe(0);
    expect(malformedAt(good.subarray(0, 3))).toBe(3);
    expect(malformedAt(patched(0, 0x46))).toBe(0);
    expect(malformedAt(patched(2, 0))).toBe(2);
    expect(malformedAt(good.subarray(0, 10))).toBe(10);
    expect(malformedAt(patched(4, 2))).toBe(4);
    expect(malformedAt(patched(5, 16))).toBe(5);
    expect(malformedAt(patched(7, 64))).toBe(6);
    expect(malformedAt(patched(8, 1))).toBe(8);
    expect(malformedAt(patched(9, 101))).toBe(9);
    expect(malformedAt(patched(11, 1))).toBe(10);
    expect(malformedAt(good.subarray(0, 300))).toBe(300);
    expect(malformedAt(Uint8Array.from([...good, 0]))).toBe(IRIS_TEMPLATE_BYTES);
    // A flipped code bit is caught by the checksum.
    expect(malformedAt(patched(100, good[100]! ^ 0x10))).toBe(IRIS_TEMPLATE_BYTES - 4);
  });

  it('never throws anything but a malformed-template error on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        expect(malformedAt(bytes)).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses to write a code of the wrong size or quality', () => {
    const c = createIrisCode(() => 0);
    expect(() => encodeIrisTemplate({ ...c, code: new Uint8Array(10) })).toThrow(/256 bytes/);
    expect(() => encodeIrisTemplate({ ...c, quality: 150 })).toThrow(/quality/);
  });
});
