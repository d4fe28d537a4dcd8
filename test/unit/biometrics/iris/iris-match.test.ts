import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  createIrisCode,
  getBit,
  irisBitIndex,
  IRIS_ANGLES,
  IRIS_BITS_PER_SAMPLE,
  IRIS_RINGS,
  type IrisCode,
} from '../../../../src/biometrics/iris/iris-code.js';
import { compareIrisCodes } from '../../../../src/biometrics/iris/iris-match.js';
import {
  compareScores,
  normalizeHd,
  normalizeHdRaw,
  HD_NORMALIZATION_BITS,
  RADIAL_SHIFT_COST,
} from '../../../../src/biometrics/iris/iris-scan.js';
import { idealIrisCode, syntheticIrisEye, syntheticIrisSample } from '../../../../src/synthetic/iris-code.js';

/** The ideal code of an eye turned by `rotation` columns (column a + rotation shows eye column a). */
function rotatedIdeal(seed: number, rotation: number) {
  const eye = syntheticIrisEye(seed);
  return createIrisCode(
    (ring, angle, k) => eye.field[(k * IRIS_RINGS + ring) * IRIS_ANGLES + ((((angle - rotation) % 128) + 128) % 128)]! > 0,
  );
}

describe('iris Hamming distance', () => {
  it('is a distance of 0 for identical codes at shift 0 (raw and normalized)', () => {
    const c = idealIrisCode(syntheticIrisEye(1));
    expect(compareIrisCodes(c, c)).toEqual({ hd: 0, hdRaw: 0, bits: 2048, shift: 0 });
  });

  it('finds a rotated copy at the right shift, within the range only', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: -8, max: 8 }), (seed, rotation) => {
        const r = compareIrisCodes(rotatedIdeal(seed, rotation), rotatedIdeal(seed, 0));
        expect(r.shift).toBe(rotation);
        expect(r.hdRaw).toBe(0);
      }),
      { numRuns: 40 },
    );
    const far = compareIrisCodes(rotatedIdeal(5, 12), rotatedIdeal(5, 0));
    expect(far.hd).toBeGreaterThan(0.3);
    expect(compareIrisCodes(rotatedIdeal(5, 12), rotatedIdeal(5, 0), { shiftRange: 12 })).toMatchObject({ hdRaw: 0, shift: 12 });
  });

  it('realigns a code whose rings moved by one (a pupil that dilated), over the rings both still hold', () => {
    const eye = syntheticIrisEye(7);
    // Ring r of `moved` shows the eye's ring r + dr (the texture moved by one ring), turned by 3 columns.
    const moved = (dr: number, turn = 3) =>
      createIrisCode(
        (ring, angle, k) =>
          eye.field[(k * IRIS_RINGS + ((ring + dr + IRIS_RINGS) % IRIS_RINGS)) * IRIS_ANGLES + ((angle - turn + 128) % 128)]! > 0,
      );
    const original = moved(0, 0);
    for (const dr of [-1, 1]) {
      const r = compareIrisCodes(moved(dr), original);
      // 7 of 8 rings face each other: 7/8 of the bits, all equal.
      expect(r).toMatchObject({ hdRaw: 0, bits: (2048 * 7) / 8, shift: 3 });
      expect(r.hd).toBeCloseTo(normalizeHd(0, 1792), 12);
    }
    // Two rings away is out of the search: no offset lines every bit up.
    expect(compareIrisCodes(moved(2), original).hdRaw).toBeGreaterThan(0.1);
  });

  it('takes a ring offset only when it gains more than RADIAL_SHIFT_COST over the rings as they are', () => {
    const eye = syntheticIrisEye(11),
      other = syntheticIrisEye(12);
    // Columns in `movedCols` show the texture one ring further out, the others where it was, and 3
    // bits in 10 are another eye's: the pair agrees a little better (normalized) at a ring offset.
    const movedCols = (a: number) => (a * 37) % IRIS_ANGLES < 79;
    const original = idealIrisCode(eye);
    const mixed = createIrisCode((ring, angle, k) =>
      (angle * 53 + ring * 7) % 100 < 30
        ? other.field[(k * IRIS_RINGS + ring) * IRIS_ANGLES + angle]! > 0
        : eye.field[(k * IRIS_RINGS + ((ring + (movedCols(angle) ? 1 : 0)) % IRIS_RINGS)) * IRIS_ANGLES + angle]! > 0,
    );
    const best = (dr: number) => bestAlignment(mixed, original, dr);
    const atZero = best(0);
    const atOffset = Math.min(best(-1).hd, best(1).hd);
    // The set-up holds: an offset is better, by less than its cost.
    expect(atOffset).toBeLessThan(atZero.hd);
    expect(atZero.hd - atOffset).toBeLessThan(RADIAL_SHIFT_COST);
    const r = compareIrisCodes(mixed, original);
    expect(atZero.hd).toBeGreaterThan(0.05);
    expect(r.hd).toBeCloseTo(atZero.hd, 12);
    expect(r.bits).toBe(2048);
  });

  it('is symmetric', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 500 }), (a, b) => {
        const x = syntheticIrisSample(syntheticIrisEye(a), 1).code;
        const y = syntheticIrisSample(syntheticIrisEye(b), 2).code;
        expect(compareIrisCodes(x, y).hd).toBeCloseTo(compareIrisCodes(y, x).hd, 12);
      }),
      { numRuns: 20 },
    );
  });

  it('puts genuine pairs well below and impostor pairs near 0.5', () => {
    const genuine: number[] = [];
    const impostor: number[] = [];
    for (let i = 0; i < 60; i++) {
      const eye = syntheticIrisEye(i);
      const a = syntheticIrisSample(eye, 1);
      const b = syntheticIrisSample(eye, 2);
      const r = compareIrisCodes(b.code, a.code);
      genuine.push(r.hd);
      expect(r.shift).toBe(b.rotation - a.rotation);
      impostor.push(compareIrisCodes(b.code, syntheticIrisSample(syntheticIrisEye(i + 1000), 1).code).hd);
    }
    const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    expect(Math.max(...genuine)).toBeLessThan(0.32);
    expect(Math.min(...impostor)).toBeGreaterThan(0.32);
    expect(mean(impostor)).toBeGreaterThan(0.42);
    expect(mean(impostor)).toBeLessThan(0.5);
    expect(mean(genuine)).toBeLessThan(0.2);
  });

  it('compares only jointly valid bits and refuses too few of them', () => {
    const a = createIrisCode((r, angle) => angle % 2 === 0 && r < 4);
    const b = createIrisCode(
      (r, angle, k) => (angle % 2 === 0 && r < 4) !== (angle < 64 && k === 0),
      (_r, angle) => angle >= 64,
    );
    // Where b is valid (angles 64..127) the codes agree.
    expect(compareIrisCodes(a, b, { shiftRange: 0 })).toMatchObject({ hd: normalizeHd(0, 1024), bits: 1024 });
    const none = createIrisCode(
      () => 1,
      (_r, angle) => angle < 4,
    );
    expect(compareIrisCodes(a, none)).toMatchObject({ hd: 1 });
  });

  it("normalizes with Daugman's reference of 911 bits", () => {
    expect(HD_NORMALIZATION_BITS).toBe(911);
    expect(normalizeHd(0.3, 911)).toBeCloseTo(0.3, 12);
    expect(normalizeHd(0.3, 911 * 4)).toBeCloseTo(0.1, 12);
    expect(normalizeHd(0.3, 911 / 4)).toBeCloseTo(0.4, 12);
    expect(normalizeHd(0.5, 2048)).toBe(0.5);
  });

  it('reports a strong match at 0, never below, with the raw figures beside it and the ranking kept', () => {
    const eye = syntheticIrisEye(77);
    const a = syntheticIrisSample(eye, 1).code;
    const same = compareIrisCodes(a, a);
    expect(same.hdRaw).toBe(0);
    expect(normalizeHdRaw(0, same.bits)).toBeLessThan(0);
    expect(same.hd).toBe(0);
    expect(normalizeHd(0, 2048)).toBe(0);
    expect(normalizeHd(1, 2048)).toBe(1);
    // A genuine pair that is not identical still ranks after the identical one.
    const b = compareIrisCodes(a, syntheticIrisSample(eye, 2).code);
    expect(b.hdRaw).toBeGreaterThan(0);
    expect(b.hd).toBeGreaterThanOrEqual(0);
    expect(compareScores(same, b)).toBeLessThan(0);
  });
});

/** Brute-force best normalized distance over column shifts ±8 at one ring offset (gallery ring r + dr faces probe ring r). */
function bestAlignment(probe: IrisCode, gallery: IrisCode, dr: number): { hd: number; bits: number } {
  let best = { hd: 2, bits: 0 };
  for (let s = -8; s <= 8; s++) {
    let d = 0,
      n = 0;
    for (let r = Math.max(0, -dr); r < Math.min(IRIS_RINGS, IRIS_RINGS - dr); r++)
      for (let a = 0; a < IRIS_ANGLES; a++)
        for (let k = 0; k < IRIS_BITS_PER_SAMPLE; k++) {
          const pi = irisBitIndex(r, (a + s + IRIS_ANGLES) % IRIS_ANGLES, k),
            gi = irisBitIndex(r + dr, a, k);
          if (!(getBit(probe.mask, pi) && getBit(gallery.mask, gi))) continue;
          n++;
          d += getBit(probe.code, pi) ^ getBit(gallery.code, gi);
        }
    const hd = normalizeHdRaw(d / n, n);
    if (hd < best.hd) best = { hd, bits: n };
  }
  return best;
}
