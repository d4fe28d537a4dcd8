import { describe, expect, it } from 'vitest';
import {
  DEFAULT_IRIS_FPIR,
  IRIS_CHANCE_TAIL,
  irisChanceFmr,
  irisIdentificationThreshold,
} from '../../../../src/biometrics/iris/iris-decision.js';

describe('iris 1:N decision (the distance a gallery of N templates allows)', () => {
  it('keeps the configured threshold for one template (1:1 and a one-template gallery decide as before)', () => {
    expect(irisIdentificationThreshold(0.32, 1)).toBe(0.32);
    expect(irisIdentificationThreshold(0.32, 0)).toBe(0.32);
    expect(irisIdentificationThreshold(0.25, 1)).toBe(0.25);
  });

  it('tightens as the gallery grows, so N times the chance of one comparison stays at the fpir', () => {
    let last = Number.POSITIVE_INFINITY;
    for (const n of [10, 100, 1_000, 10_000, 100_000]) {
      const t = irisIdentificationThreshold(0.32, n);
      expect(t).toBeLessThan(last);
      expect(n * irisChanceFmr(t)).toBeCloseTo(DEFAULT_IRIS_FPIR, 10);
      last = t;
    }
    // One decade more templates costs 1/perDecade of distance.
    expect(irisIdentificationThreshold(0.32, 100) - irisIdentificationThreshold(0.32, 1_000)).toBeCloseTo(
      1 / IRIS_CHANCE_TAIL.perDecade,
      10,
    );
    // A looser fpir allows more: at 1e-2 a gallery of 100 gets what 10 get at 1e-3.
    expect(irisIdentificationThreshold(0.32, 100, 1e-2)).toBeCloseTo(irisIdentificationThreshold(0.32, 10), 10);
  });

  it('reads the measured tail at its anchor and refuses an fpir outside (0, 1)', () => {
    expect(Math.log10(irisChanceFmr(IRIS_CHANCE_TAIL.hd))).toBeCloseTo(IRIS_CHANCE_TAIL.log10Fmr, 10);
    expect(irisChanceFmr(0.6)).toBe(1);
    expect(() => irisIdentificationThreshold(0.32, 10, 0)).toThrow(RangeError);
    expect(() => irisIdentificationThreshold(0.32, 10, 1)).toThrow(RangeError);
  });
});
