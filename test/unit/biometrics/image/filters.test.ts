import { describe, expect, it } from 'vitest';
import { gaussianBlur, gaussianBoxRadius, sobel } from '../../../../src/biometrics/image/filters.js';

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

describe('sobel and the blur radius', () => {
  it('a ramp has its slope (times 8) inside and nothing on the border', () => {
    const w = 7,
      h = 6;
    const f = Float32Array.from({ length: w * h }, (_, i) => 3 * (i % w) + 5 * Math.floor(i / w));
    const g = sobel(f, w, h);
    expect(g.gx[2 * w + 3]).toBe(24);
    expect(g.gy[2 * w + 3]).toBe(40);
    expect(g.mag[2 * w + 3]).toBeCloseTo(Math.hypot(24, 40), 4);
    expect(g.gx[0]).toBe(0);
    expect(g.mag[w - 1]).toBe(0);
    expect(g.max).toBeCloseTo(Math.hypot(24, 40), 9);
  });

  it('sigmas of one box radius blur alike', () => {
    expect(gaussianBoxRadius(0.3)).toBe(0);
    expect(gaussianBoxRadius(1)).toBe(1);
    expect(gaussianBoxRadius(1.9)).toBe(1);
    expect(gaussianBoxRadius(2)).toBe(2);
    const src = Float32Array.from({ length: 30 * 20 }, (_, i) => (i * 7919) % 251);
    expect(gaussianBlur(src, 30, 20, 1.9)).toEqual(gaussianBlur(src, 30, 20, 1));
  });
});
