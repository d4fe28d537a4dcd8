/**
 * The fields the fingerprint pipeline computes before enhancement: foreground segmentation,
 * ridge orientation with its coherence, and ridge period. Images are float, row-major, ridges
 * positive (1 − gray/255).
 *
 * Tested in test/unit/biometrics/extract/finger-pipeline.test.ts (the ground-truth minutiae of
 * synthetic images are found; an empty sensor and pure noise are refused) and
 * test/unit/biometrics/extract/finger-quality.test.ts.
 */
import { boxBlur } from '../image/filters.js';

export interface Segmentation {
  /** 1 = fingerprint area, per pixel. */
  mask: Uint8Array;
  /** Fraction of the image that is fingerprint. */
  coverage: number;
}

/**
 * Foreground = blocks whose ridge contrast (local standard deviation) is above a fraction of the
 * strong blocks', cleaned by a majority vote and hole filling, then eroded by `erodeBlocks` so
 * the unreliable border is left out.
 */
export function segment(img: Float32Array, width: number, height: number, block = 12, rel = 0.3, erode = 4): Segmentation {
  const mean = boxBlur(img, width, height, block / 2);
  const sq = new Float32Array(img.length);
  for (let i = 0; i < img.length; i++) sq[i] = img[i]! * img[i]!;
  const meanSq = boxBlur(sq, width, height, block / 2);
  const sd = new Float32Array(img.length);
  for (let i = 0; i < img.length; i++) sd[i] = Math.sqrt(Math.max(0, meanSq[i]! - mean[i]! * mean[i]!));
  const strong = percentile(sd, 0.95);
  const thr = Math.max(0.03, rel * strong);
  let mask: Uint8Array = new Uint8Array(img.length);
  for (let i = 0; i < img.length; i++) mask[i] = sd[i]! > thr ? 1 : 0;
  // Smooth the mask: majority over a window, then fill holes (background not reachable from the border).
  const mf = new Float32Array(img.length);
  for (let i = 0; i < img.length; i++) mf[i] = mask[i]!;
  const vote = boxBlur(mf, width, height, block);
  for (let i = 0; i < img.length; i++) mask[i] = vote[i]! > 0.5 ? 1 : 0;
  mask = fillHoles(mask, width, height);
  // Erode by distance: keep pixels whose window of radius `erode` is all foreground.
  if (erode > 0) {
    for (let i = 0; i < img.length; i++) mf[i] = mask[i]!;
    const e = boxBlur(mf, width, height, erode);
    for (let i = 0; i < img.length; i++) mask[i] = e[i]! > 0.999 ? 1 : 0;
  }
  let n = 0;
  for (const v of mask) n += v;
  return { mask, coverage: n / mask.length };
}

/** The p-quantile of non-negative values by a 1024-bin histogram (no sort). */
function percentile(v: Float32Array, p: number): number {
  let max = 0;
  for (const x of v) if (x > max) max = x;
  if (max === 0) return 0;
  const bins = new Int32Array(1024);
  for (const x of v) bins[Math.min(1023, Math.floor((x / max) * 1024))]!++;
  let acc = 0;
  const target = p * v.length;
  for (let b = 0; b < 1024; b++) {
    acc += bins[b]!;
    if (acc >= target) return ((b + 0.5) / 1024) * max;
  }
  return max;
}

function fillHoles(mask: Uint8Array, width: number, height: number): Uint8Array {
  const outside = new Uint8Array(mask.length);
  const stack: number[] = [];
  const push = (i: number) => {
    if (!mask[i] && !outside[i]) {
      outside[i] = 1;
      stack.push(i);
    }
  };
  for (let x = 0; x < width; x++) {
    push(x);
    push((height - 1) * width + x);
  }
  for (let y = 0; y < height; y++) {
    push(y * width);
    push(y * width + width - 1);
  }
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % width,
      y = (i - x) / width;
    if (x > 0) push(i - 1);
    if (x < width - 1) push(i + 1);
    if (y > 0) push(i - width);
    if (y < height - 1) push(i + width);
  }
  const out = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = outside[i] ? 0 : 1;
  return out;
}

export interface OrientationField {
  /** Ridge direction in [0, π), image coordinates (y down), per pixel. */
  theta: Float32Array;
  /** 0..1: how consistent the ridges are around the pixel. */
  coherence: Float32Array;
}

/** Gradient-based orientation (averaged squared gradients), smoothed as a doubled-angle field. */
export function orientationField(img: Float32Array, width: number, height: number, radius = 8): OrientationField {
  const s = boxBlur(img, width, height, 1);
  const n = img.length;
  const gxx = new Float32Array(n),
    gyy = new Float32Array(n),
    gxy = new Float32Array(n);
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const gx = s[i - width + 1]! + 2 * s[i + 1]! + s[i + width + 1]! - s[i - width - 1]! - 2 * s[i - 1]! - s[i + width - 1]!;
      const gy = s[i + width - 1]! + 2 * s[i + width]! + s[i + width + 1]! - s[i - width - 1]! - 2 * s[i - width]! - s[i - width + 1]!;
      gxx[i] = gx * gx;
      gyy[i] = gy * gy;
      gxy[i] = gx * gy;
    }
  }
  const a = boxBlur(gxx, width, height, radius),
    b = boxBlur(gyy, width, height, radius),
    c = boxBlur(gxy, width, height, radius);
  const c2 = new Float32Array(n),
    s2 = new Float32Array(n),
    coherence = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!,
      e = 2 * c[i]!;
    const mag = Math.sqrt(d * d + e * e);
    coherence[i] = mag / (a[i]! + b[i]! + 1e-9);
    // Gradient doubled angle atan2(e, d); the ridge is perpendicular: add π (doubled) → negate.
    c2[i] = -d;
    s2[i] = -e;
  }
  const cs = boxBlur(boxBlur(c2, width, height, 3), width, height, 2),
    ss = boxBlur(boxBlur(s2, width, height, 3), width, height, 2);
  const theta = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let t = 0.5 * Math.atan2(ss[i]!, cs[i]!);
    if (t < 0) t += Math.PI;
    theta[i] = t;
  }
  return { theta, coherence };
}

/**
 * Ridge period per pixel from block signatures: the image is sampled across the ridges (along
 * the normal) in a band along them, and the mean distance between the signature's peaks is the
 * period. Blocks without a clean signature take the median of the others; the result is clamped
 * to [minP, maxP].
 */
export function ridgePeriod(
  img: Float32Array,
  width: number,
  height: number,
  field: OrientationField,
  mask: Uint8Array,
  block = 16,
  minP = 5,
  maxP = 15,
): Float32Array {
  const bw = Math.ceil(width / block),
    bh = Math.ceil(height / block);
  const per = new Float32Array(bw * bh).fill(NaN);
  const L = 32,
    B = 7;
  const sig = new Float32Array(L);
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++) {
      const cx = Math.min(width - 1, bx * block + block / 2),
        cy = Math.min(height - 1, by * block + block / 2);
      const ci = Math.round(cy) * width + Math.round(cx);
      if (!mask[ci]) continue;
      const t = field.theta[ci]!;
      const ux = Math.cos(t),
        uy = Math.sin(t); // along the ridge
      const nx = -uy,
        ny = ux; // across
      for (let k = 0; k < L; k++) {
        let acc = 0,
          cnt = 0;
        const d = k - L / 2;
        for (let j = -B; j <= B; j++) {
          const x = Math.round(cx + d * nx + j * ux),
            y = Math.round(cy + d * ny + j * uy);
          if (x < 0 || y < 0 || x >= width || y >= height) continue;
          acc += img[y * width + x]!;
          cnt++;
        }
        sig[k] = cnt ? acc / cnt : 0;
      }
      const peaks: number[] = [];
      for (let k = 1; k < L - 1; k++) if (sig[k]! > sig[k - 1]! && sig[k]! >= sig[k + 1]!) peaks.push(k);
      if (peaks.length < 2) continue;
      const p = (peaks[peaks.length - 1]! - peaks[0]!) / (peaks.length - 1);
      if (p >= minP && p <= maxP) per[by * bw + bx] = p;
    }
  }
  const valid = [...per].filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const median = valid.length ? valid[valid.length >> 1]! : 9;
  const blockMap = new Float32Array(bw * bh);
  for (let i = 0; i < per.length; i++) blockMap[i] = Number.isNaN(per[i]!) ? median : per[i]!;
  const smooth = boxBlur(blockMap, bw, bh, 1);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      out[y * width + x] = Math.min(
        maxP,
        Math.max(minP, smooth[Math.min(bh - 1, Math.floor(y / block)) * bw + Math.min(bw - 1, Math.floor(x / block))]!),
      );
    }
  return out;
}
