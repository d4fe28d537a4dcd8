import { describe, expect, it } from 'vitest';
import { getBit, irisBitIndex, validBitCount } from '../../../src/biometrics/iris/iris-code.js';
import { idealIrisCode, syntheticIrisEye, syntheticIrisSample } from '../../../src/synthetic/iris-code.js';
import { IrisIndex } from '../../../src/biometrics/iris/iris-index.js';

describe('synthetic iris codes', () => {
  it('are reproducible from their seeds and differ between seeds', () => {
    const a = syntheticIrisSample(syntheticIrisEye(9), 3);
    const b = syntheticIrisSample(syntheticIrisEye(9), 3);
    expect(a).toEqual(b);
    expect(syntheticIrisSample(syntheticIrisEye(9), 4).code.code).not.toEqual(a.code.code);
    expect(idealIrisCode(syntheticIrisEye(10)).code).not.toEqual(idealIrisCode(syntheticIrisEye(9)).code);
  });

  it('have correlated neighbouring bits, balanced phases, and rotations within the range', () => {
    let same = 0;
    let ones = 0;
    let total = 0;
    for (let seed = 0; seed < 20; seed++) {
      const c = idealIrisCode(syntheticIrisEye(seed));
      for (let angle = 0; angle < 128; angle++) {
        for (let ring = 0; ring < 8; ring++) {
          const bit = getBit(c.code, irisBitIndex(ring, angle, 0));
          ones += bit;
          same += bit === getBit(c.code, irisBitIndex(ring, (angle + 1) % 128, 0)) ? 1 : 0;
          total++;
        }
      }
    }
    expect(same / total).toBeGreaterThan(0.7);
    expect(ones / total).toBeGreaterThan(0.4);
    expect(ones / total).toBeLessThan(0.6);
    for (let s = 0; s < 50; s++) expect(Math.abs(syntheticIrisSample(syntheticIrisEye(1), s).rotation)).toBeLessThanOrEqual(4);
  });

  it('mask eyelids and reflections, and report a lower quality for them', () => {
    const occluded = syntheticIrisSample(syntheticIrisEye(2), 1).code;
    const clear = syntheticIrisSample(syntheticIrisEye(2), 1, { occlusion: false }).code;
    expect(validBitCount(clear)).toBe(2048);
    expect(validBitCount(occluded)).toBeLessThan(2048);
    expect(occluded.quality).toBeLessThanOrEqual(clear.quality);
    // The upper eyelid (around column 32) reaches the outer ring more often than the inner one.
    let outer = 0;
    let inner = 0;
    for (let s = 0; s < 30; s++) {
      const c = syntheticIrisSample(syntheticIrisEye(3), s).code;
      outer += 1 - getBit(c.mask, irisBitIndex(7, 32, 0));
      inner += 1 - getBit(c.mask, irisBitIndex(0, 32, 0));
    }
    expect(outer).toBeGreaterThan(inner);
  });

  it('an index refuses a code of the wrong size', () => {
    const idx = new IrisIndex({ workers: 0 });
    const c = idealIrisCode(syntheticIrisEye(1));
    expect(() => idx.add('x', { ...c, mask: new Uint8Array(10) })).toThrow(/256 bytes/);
    expect(idx.size).toBe(0);
  });
});
