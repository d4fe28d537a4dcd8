/**
 * Fingerprint capture quality, in the spirit of NFIQ 2 (ISO/IEC 29794-4): a few measures of the
 * print as the pipeline saw it, each mapped to 0..1 between "unusable" and "good", combined into
 * one 0..100 score that predicts how well the capture will match.
 *
 * - clarity: how much of the print's signal is clean ridge: per 16 px block of print, the
 *   correlation between the locally normalized image and its Gabor-enhanced version (a clear
 *   ridge/valley pattern is what the enhancement reproduces; noise, smudge, dry breaks and pores
 *   are what it drops), averaged over the blocks (NFIQ 2's local clarity, measured through the
 *   enhancement the pipeline already computed).
 * - coherence: mean ridge-orientation coherence over the print (NFIQ 2's orientation certainty).
 * - area: the print's usable area in mm² at 500 dpi (NFIQ 2's foreground area), so a tip or a
 *   print half off the sensor scores low whatever the sensor's size.
 * - minutiae: how many minutiae the template keeps (NFIQ 2's minutiae count).
 * - sharpness: the fine detail left beside the ridges (the image minus its 3×3 mean, over the
 *   local ridge contrast): a smudged or slid finger, whose ridges run together, keeps clear but
 *   blurred ridges that the other measures take for good ones (real prints 0.26-0.42, the same
 *   prints blurred 0.09-0.14).
 *
 * The score is 100 × the weighted geometric mean of the five terms: one poor measure pulls it
 * down (a clear but tiny print matches badly too) without zeroing it.
 */

export interface FingerQualityFeatures {
  /** Mean block correlation of the image with its enhancement, 0..1. */
  clarity: number;
  /** Mean orientation coherence over the print, 0..1. */
  coherence: number;
  /** Usable print area, mm² (at 500 dpi). */
  areaMm2: number;
  /** Minutiae in the template. */
  minutiae: number;
  /** Fine detail left beside the ridges: high-pass energy over the ridge contrast. */
  sharpness: number;
}

/**
 * Each measure's "unusable" and "good" points and its weight in the geometric mean (the weights
 * are normalised by their sum). Set on the shared real prints and poor captures made from them
 * (`npm run bench:real -- --degrade`): the good prints score 66-100, and the lowest-scoring fifth
 * of a mixed set carries most of its false non-matches.
 */
export const FINGER_QUALITY_MODEL = {
  clarity: { low: 0.25, high: 0.9, weight: 0.1 },
  coherence: { low: 0.5, high: 0.8, weight: 0.2 },
  areaMm2: { low: 20, high: 110, weight: 0.2 },
  minutiae: { low: 6, high: 25, weight: 0.2 },
  sharpness: { low: 0.1, high: 0.25, weight: 0.2 },
} as const;

const BLOCK = 16;
const MM_PER_PX_500 = 25.4 / 500;

/** Mean correlation of `image` and `enhanced` over blocks that lie wholly in the print. */
export function ridgeClarity(image: Float32Array, enhanced: Float32Array, mask: Uint8Array, width: number, height: number): number {
  let sum = 0,
    blocks = 0;
  for (let by = 0; by + BLOCK <= height; by += BLOCK) {
    for (let bx = 0; bx + BLOCK <= width; bx += BLOCK) {
      let inside = 0,
        sa = 0,
        sb = 0,
        saa = 0,
        sbb = 0,
        sab = 0;
      for (let y = by; y < by + BLOCK; y++) {
        for (let x = bx; x < bx + BLOCK; x++) {
          const i = y * width + x;
          if (!mask[i]) continue;
          const a = image[i]!,
            b = enhanced[i]!;
          inside++;
          sa += a;
          sb += b;
          saa += a * a;
          sbb += b * b;
          sab += a * b;
        }
      }
      if (inside < BLOCK * BLOCK * 0.9) continue;
      const va = saa - (sa * sa) / inside,
        vb = sbb - (sb * sb) / inside;
      if (va <= 0 || vb <= 0) {
        blocks++;
        continue;
      }
      sum += Math.max(0, (sab - (sa * sb) / inside) / Math.sqrt(va * vb));
      blocks++;
    }
  }
  return blocks ? sum / blocks : 0;
}

/** RMS of the image minus its 3×3 mean over the RMS local contrast, on the print. */
export function ridgeSharpness(raw: Float32Array, localVar: Float32Array, mask: Uint8Array, width: number, height: number): number {
  let hp = 0,
    v = 0;
  for (let y = 1; y < height - 1; y++)
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      if (!mask[i]) continue;
      let m = 0;
      for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) m += raw[i + dy * width + dx]!;
      hp += (raw[i]! - m / 9) ** 2;
      v += localVar[i]!;
    }
  return v > 0 ? Math.sqrt(hp / v) : 0;
}

/** The print's area in mm², from its mask at 500 dpi. */
export function printAreaMm2(mask: Uint8Array): number {
  let n = 0;
  for (const v of mask) n += v;
  return n * MM_PER_PX_500 * MM_PER_PX_500;
}

/** 0..100 from the measures (see the module comment); at least 1, as ISO records reserve 0. */
export function fingerQualityScore(f: FingerQualityFeatures): number {
  const M = FINGER_QUALITY_MODEL;
  const term = (v: number, m: { low: number; high: number }) => Math.min(1, Math.max(0.01, (v - m.low) / (m.high - m.low)));
  let logSum = 0,
    wsum = 0;
  for (const k of Object.keys(M) as Array<keyof typeof M>) {
    logSum += M[k].weight * Math.log(term(f[k], M[k]));
    wsum += M[k].weight;
  }
  return Math.max(1, Math.min(100, Math.round(100 * Math.exp(logSum / wsum))));
}
