import { describe, expect, it } from 'vitest';
import { gaussianBlur } from '../../../../src/biometrics/image/filters.js';

describe('filters', () => {
  it('blurs keep the mean of a constant image and smooth an impulse', () => {
    const src = new Float32Array(21 * 21);
    src[10 * 21 + 10] = 441;
    const out = gaussianBlur(src, 21, 21, 2);
    let sum = 0;
    for (const v of out) sum += v;
    expect(sum).toBeCloseTo(441, 1);
    expect(out[10 * 21 + 10]!).toBeLessThan(441 / 10);
  });
});
