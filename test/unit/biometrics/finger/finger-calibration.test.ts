import { describe, expect, it } from 'vitest';
import { calibrateScore, CALIBRATION_RAW } from '../../../../src/biometrics/finger/finger-calibration.js';

describe('finger score calibration', () => {
  it('calibration is monotonic and maps the table onto -10 log10 FMR', () => {
    let prev = -1;
    for (let raw = 0; raw < 200; raw += 0.5) {
      const s = calibrateScore(raw);
      expect(s).toBeGreaterThanOrEqual(prev);
      prev = s;
    }
    expect(calibrateScore(0)).toBe(0);
    const idx40 = CALIBRATION_RAW.findIndex((_, i) => i === 20);
    expect(calibrateScore(CALIBRATION_RAW[idx40]!)).toBeCloseTo(40, 6);
  });
});
