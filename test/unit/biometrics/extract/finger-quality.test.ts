import { describe, expect, it } from 'vitest';
import { extractFinger } from '../../../../src/biometrics/extract/finger-pipeline.js';
import {
  FINGER_QUALITY_MODEL,
  fingerQualityScore,
  printAreaMm2,
  ridgeClarity,
  type FingerQualityFeatures,
} from '../../../../src/biometrics/extract/finger-quality.js';
import { SeededRandom } from '../../../../src/biometrics/image/seeded-random.js';
import { DEGRADATIONS, degradeFinger } from '../../../../src/synthetic/poor-capture.js';
import { compareFingerTemplates } from '../../../../src/biometrics/finger/matcher.js';
import { syntheticFingerImage } from '../../../../src/synthetic/finger-image.js';

const good: FingerQualityFeatures = { clarity: 0.9, coherence: 0.8, areaMm2: 170, minutiae: 40, sharpness: 0.3 };

describe('finger quality score', () => {
  it('is 100 for a capture good on every measure and drops with each poor one', () => {
    expect(fingerQualityScore({ clarity: 1, coherence: 1, areaMm2: 200, minutiae: 60, sharpness: 0.4 })).toBe(100);
    const base = fingerQualityScore(good);
    for (const [k, m] of Object.entries(FINGER_QUALITY_MODEL) as Array<
      [keyof FingerQualityFeatures, { low: number; high: number; weight: number }]
    >) {
      if (m.weight === 0) continue;
      const mid = fingerQualityScore({ ...good, [k]: (m.low + m.high) / 2 });
      const poor = fingerQualityScore({ ...good, [k]: m.low });
      expect(mid, k).toBeLessThan(base);
      expect(poor, k).toBeLessThan(mid);
      expect(poor, k).toBeGreaterThanOrEqual(1);
    }
    expect(fingerQualityScore({ clarity: 0, coherence: 0, areaMm2: 0, minutiae: 0, sharpness: 0 })).toBe(1);
  });

  it('ridge clarity is high for clean ridges and falls with noise; area is counted in mm² at 500 dpi', () => {
    const W = 64,
      H = 64;
    const clean = new Float32Array(W * H),
      noisy = new Float32Array(W * H),
      mask = new Uint8Array(W * H).fill(1);
    const rnd = new SeededRandom(7);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const v = Math.cos((2 * Math.PI * x) / 9);
        clean[y * W + x] = v;
        noisy[y * W + x] = v + 1.5 * rnd.gauss();
      }
    expect(ridgeClarity(clean, clean, mask, W, H)).toBeGreaterThan(0.99);
    const n = ridgeClarity(noisy, clean, mask, W, H);
    expect(n).toBeLessThan(0.6);
    expect(n).toBeGreaterThan(0.2);
    expect(ridgeClarity(clean, clean, new Uint8Array(W * H), W, H)).toBe(0);
    expect(printAreaMm2(mask)).toBeCloseTo(W * H * (25.4 / 500) ** 2, 6);
  });

  it('a smudged, partial or dry capture scores lower than the print; a faint one is enhanced, kept and matched', async () => {
    const im = syntheticFingerImage(31, 1);
    const clean = await extractFinger(im);
    expect(clean.template.quality).toBeGreaterThanOrEqual(80);
    expect(clean.qualityFeatures.minutiae).toBe(clean.template.minutiae.length);
    for (const kind of DEGRADATIONS.filter((k) => k !== 'faint')) {
      const poor = await extractFinger(degradeFinger(im, kind, 5)).catch(() => null);
      // A refusal is also a right answer for a poor capture; a template must score lower.
      if (poor) expect(poor.template.quality, kind).toBeLessThan(clean.template.quality - 15);
    }
    const faint = await extractFinger(degradeFinger(im, 'faint', 5));
    expect(faint.template.quality).toBeGreaterThanOrEqual(40);
    expect(compareFingerTemplates(faint.template, (await extractFinger(syntheticFingerImage(31, 2))).template)).toBeGreaterThan(40);
  });
});
