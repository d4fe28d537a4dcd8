/**
 * Focus of the iris texture, in the spirit of ISO/IEC 29794-6's sharpness measure (a high-pass
 * filter's power over the iris, as Daugman's 8 × 8 kernel or Kang and Park's), made independent of
 * the camera: the filter's scale is a fraction of the iris radius, not a number of pixels, and its
 * response is divided by the iris's own contrast, so neither the eye's size in the frame nor the
 * camera's gain or the iris's pigment moves it.
 *
 * focus = sqrt(max(0, mean B² − (g·σn)²)) / (1.4826 × MAD of the gray level), over the iris
 * annulus, with B = G(σ) − G(2σ), σ = FOCUS_SCALE of the iris radius (G: Gaussian blur), σn the
 * sensor noise read on the same annulus and g the band's gain on white noise (bandNoiseGain,
 * exact from the two kernels). Defocus (a Gaussian of growing width) takes that band away while
 * the iris's contrast stays. It does not depend on how soft the pupil's edge is (that edge is left
 * out of the annulus), which the pupil-edge width used before did: a soft pupil margin round a
 * sharp iris was refused as out of focus.
 *
 * The noise's share is taken out because a defocused capture keeps its sensor's noise: once the
 * texture is gone, the band reads that noise, and the band's median magnitude over the contrast
 * (the measure before) kept eyes blurred by 16-20 % of their iris radius, which match none of
 * their siblings, over the floor. Texture and noise add in power, so the noise's power, (g·σn)²,
 * comes off the band's mean power; the mean power rather than the median magnitude because, on
 * the tune halves, it also separated better before any noise was taken out. σn is Immerkær's
 * estimate (1996: the mask [1 −2 1; −2 4 −2; 1 −2 1], blind to planes and ramps, answers noise of
 * σn with 6σn), read robustly (the median magnitude over the annulus, so that the texture's own
 * fine edges weigh as little as they can): on the iris itself, where the band is read, at the
 * iris's own gray level (shot noise grows with it). Every figure is relative to the iris radius or
 * to the image's own gray levels: nothing is tied to one camera.
 *
 * The scale was chosen, and the threshold set, by test/bench/iris-focus-calibration.ts (see
 * MIN_FOCUS in iris-segmentation.ts). A ratio of two bands (fine over coarse) was tried and left:
 * it settles at 1/4 (the ratio of a smooth image) by a blur of 6 % of the iris radius, while real
 * irises still match their siblings up to about 10 %.
 *
 * frameFocus reads the same kind of band over the whole frame, at a scale tied to the frame's size
 * and over its own gray range: the figure of an eye too blurred to be found, which has no iris to
 * read irisFocus on (its floor MIN_FRAME_FOCUS, in iris-segmentation.ts, is read only there).
 *
 * Tested in test/unit/biometrics/extract/iris-focus.test.ts.
 */
import type { Circle } from './iris-geometry.js';
import type { Plane } from './iris-pupil.js';

/** The band's scale, a fraction of the iris radius (2 px on an iris 100 px in radius). */
export const FOCUS_SCALE = 0.02;

/** A Gaussian kernel of σ px (at least 0.5 px), radius 3σ, normalised. */
function kernel(sigma: number): Float32Array {
  const s = Math.max(0.5, sigma);
  const r = Math.max(1, Math.ceil(3 * s));
  const k = new Float32Array(2 * r + 1);
  let sum = 0;
  for (let i = -r; i <= r; i++) sum += k[i + r] = Math.exp(-(i * i) / (2 * s * s));
  for (let i = 0; i < k.length; i++) k[i]! /= sum;
  return k;
}

/** Separable Gaussian blur with an exact kernel (the box approximation is too coarse at 1-2 px), edges clamped. */
function blur(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  const k = kernel(sigma);
  const r = (k.length - 1) >> 1;
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  const line = new Float32Array(Math.max(w, h) + 2 * r);
  // Each row, then each column, copied into a line padded with its end values, so the inner loop
  // needs no clamping.
  for (let y = 0; y < h; y++) {
    const o = y * w;
    for (let i = 0; i < r; i++) {
      line[i] = src[o]!;
      line[r + w + i] = src[o + w - 1]!;
    }
    line.set(src.subarray(o, o + w), r);
    for (let x = 0; x < w; x++) {
      let acc = 0;
      for (let i = 0; i <= 2 * r; i++) acc += k[i]! * line[x + i]!;
      tmp[o + x] = acc;
    }
  }
  for (let x = 0; x < w; x++) {
    for (let i = 0; i < r; i++) {
      line[i] = tmp[x]!;
      line[r + h + i] = tmp[(h - 1) * w + x]!;
    }
    for (let y = 0; y < h; y++) line[r + y] = tmp[y * w + x]!;
    for (let y = 0; y < h; y++) {
      let acc = 0;
      for (let i = 0; i <= 2 * r; i++) acc += k[i]! * line[y + i]!;
      out[y * w + x] = acc;
    }
  }
  return out;
}

/** The element at index k of `v` sorted (Hoare's selection; reorders `v`). */
function select(v: Float32Array, k: number): number {
  let lo = 0,
    hi = v.length - 1;
  while (lo < hi) {
    const pivot = v[(lo + hi) >> 1]!;
    let i = lo,
      j = hi;
    while (i <= j) {
      while (v[i]! < pivot) i++;
      while (v[j]! > pivot) j--;
      if (i <= j) {
        const t = v[i]!;
        v[i++] = v[j]!;
        v[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return v[k]!;
}

/** The element at index ⌊n/2⌋ of `v` sorted (reorders `v`). */
const median = (v: Float32Array): number => select(v, v.length >> 1);

/**
 * The gain of the band-pass filter G(σ) − G(2σ) on white noise: the standard deviation of its
 * response to noise of unit standard deviation, exactly, from the two discrete kernels (a 2-D
 * kernel K = g₁g₁ᵀ − g₂g₂ᵀ answers white noise of σn with σn × sqrt(ΣK²), and ΣK² = (Σg₁²)² −
 * 2(Σg₁g₂)² + (Σg₂²)²).
 */
export function bandNoiseGain(sigma: number): number {
  const k1 = kernel(sigma),
    k2 = kernel(2 * sigma);
  const r1 = (k1.length - 1) >> 1,
    r2 = (k2.length - 1) >> 1;
  let s11 = 0,
    s22 = 0,
    s12 = 0;
  for (let i = -r2; i <= r2; i++) {
    const a = Math.abs(i) <= r1 ? k1[i + r1]! : 0,
      b = k2[i + r2]!;
    s11 += a * a;
    s22 += b * b;
    s12 += a * b;
  }
  return Math.sqrt(Math.max(0, s11 * s11 - 2 * s12 * s12 + s22 * s22));
}

/**
 * Immerkær's noise mask (1996), [1 −2 1; −2 4 −2; 1 −2 1], at pixel `i` of a plane `w` wide (not
 * on its border): blind to any plane and to any linear ramp, it answers white noise of σn with a
 * normal spread of 6σn.
 */
export function noiseMask(f: ArrayLike<number>, w: number, i: number): number {
  return (
    f[i - w - 1]! -
    2 * f[i - w]! +
    f[i - w + 1]! -
    2 * f[i - 1]! +
    4 * f[i]! -
    2 * f[i + 1]! +
    f[i + w - 1]! -
    2 * f[i + w]! +
    f[i + w + 1]!
  );
}

/** What irisFocus reads on an iris (every figure over the annulus it reads). */
export interface IrisFocusReading {
  /** The focus: the band's RMS with the noise's share taken out, over the iris's contrast (NaN when unmeasured). */
  focus: number;
  /** The band's RMS and its median absolute value, gray levels. */
  bandRms: number;
  bandMedian: number;
  /** The sensor noise's standard deviation (Immerkær's mask, robustly), gray levels. */
  noise: number;
  /** The noise's share of the band's RMS: noise × bandNoiseGain. */
  bandNoise: number;
  /** The iris's contrast: 1.4826 × MAD of its gray level. */
  spread: number;
}

/**
 * The focus of the iris between `pupil` and `iris` on plane `p` (reflections filled, `p.holes`
 * left out), over the annulus from 20 % to 80 % of the way from the pupil's edge to the limbus
 * (clear of both edges' steps), the upper quarter (eyelid and lashes) left out. NaN when under 50
 * pixels of iris are in view or the iris is flat.
 */
export function irisFocus(p: Plane, pupil: Circle, iris: Circle): number {
  return irisFocusReading(p, pupil, iris).focus;
}

/** irisFocus with the figures it is made of. */
export function irisFocusReading(p: Plane, pupil: Circle, iris: Circle): IrisFocusReading {
  const unmeasured = { focus: NaN, bandRms: NaN, bandMedian: NaN, noise: NaN, bandNoise: NaN, spread: NaN };
  const sigma = FOCUS_SCALE * iris.r;
  // The iris's box and a margin for the wider filter.
  const m = Math.ceil(6 * Math.max(0.5, sigma)) + 1;
  const x0 = Math.max(0, Math.floor(iris.x - iris.r) - m),
    y0 = Math.max(0, Math.floor(iris.y - iris.r) - m),
    x1 = Math.min(p.w, Math.ceil(iris.x + iris.r) + m + 1),
    y1 = Math.min(p.h, Math.ceil(iris.y + iris.r) + m + 1);
  const w = x1 - x0,
    h = y1 - y0;
  if (w < 4 || h < 4) return unmeasured;
  const crop = new Float32Array(w * h);
  for (let y = 0; y < h; y++) crop.set(p.f.subarray((y + y0) * p.w + x0, (y + y0) * p.w + x1), y * w);
  const g1 = blur(crop, w, h, sigma),
    g2 = blur(crop, w, h, 2 * sigma);
  const band = new Float32Array(w * h),
    level = new Float32Array(w * h),
    mask = new Float32Array(w * h);
  let n = 0,
    nm = 0,
    power = 0;
  // The limbus along the ray through each pixel (limbusDistance with the ray's unit vector).
  const wx = pupil.x - iris.x,
    wy = pupil.y - iris.y;
  const c = wx * wx + wy * wy - iris.r * iris.r;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const X = x + x0,
        Y = y + y0;
      const dx = X - pupil.x,
        dy = Y - pupil.y;
      const d = Math.hypot(dx, dy);
      // Inside the pupil, or in the upper quarter (sin θ under −0.7).
      if (d <= pupil.r || dy < -0.7 * d) continue;
      const ux = dx / d,
        uy = dy / d;
      const bb = ux * wx + uy * wy;
      const lim = -bb + Math.sqrt(Math.max(0, bb * bb - c));
      const rho = (d - pupil.r) / Math.max(1e-6, lim - pupil.r);
      if (rho < 0.2 || rho > 0.8) continue;
      if (p.holes?.[Y * p.w + X]) continue;
      const i = y * w + x;
      const b = g1[i]! - g2[i]!;
      power += b * b;
      band[n] = Math.abs(b);
      level[n++] = crop[i]!;
      if (x > 0 && y > 0 && x < w - 1 && y < h - 1) mask[nm++] = Math.abs(noiseMask(crop, w, i));
    }
  if (n < 50) return unmeasured;
  const lv = level.subarray(0, n);
  const mid = median(lv);
  for (let i = 0; i < n; i++) lv[i] = Math.abs(lv[i]! - mid);
  const spread = 1.4826 * median(lv);
  const bandRms = Math.sqrt(power / n);
  // Immerkær's mask answers noise of σn with a normal spread of 6σn, whose median magnitude is
  // 0.6745 of it; the median (not Immerkær's mean) so that the texture's own edges in the annulus
  // count as little as they can.
  const noise = nm ? median(mask.subarray(0, nm)) / (6 * 0.6745) : 0;
  const bandNoise = noise * bandNoiseGain(sigma);
  const texture = Math.sqrt(Math.max(0, bandRms * bandRms - bandNoise * bandNoise));
  return { focus: spread > 0 ? texture / spread : NaN, bandRms, bandMedian: median(band.subarray(0, n)), noise, bandNoise, spread };
}

/** The frame focus's band scale, a fraction of the frame's short side (2.4 px on a 320 × 240 frame). */
export const FRAME_FOCUS_SCALE = 0.01;

/**
 * The focus of a whole frame, read where no iris could be found to read it on: the strongest
 * band-pass responses of the frame (the 99th percentile of |G(σ) − G(2σ)|, σ = FRAME_FOCUS_SCALE of
 * its short side) over its own 1–99 % gray range. A sharp frame, eye open or shut, has edges that
 * answer at that scale (lashes, eyelid margins, the pupil's rim, reflections); defocus spreads
 * every one of them, and the frame's range stays. Like irisFocus, it moves with neither the gain
 * nor the frame's size; unlike it, it does not need the iris, so it tells an eye too blurred to
 * be found from one that is shut or not in view. NaN for a flat frame.
 */
export function frameFocus(p: Plane): number {
  const { f, w, h } = p;
  if (w < 4 || h < 4) return Number.NaN;
  const sigma = FRAME_FOCUS_SCALE * Math.min(w, h);
  const g1 = blur(f, w, h, sigma),
    g2 = blur(f, w, h, 2 * sigma);
  const band = new Float32Array(w * h);
  for (let i = 0; i < band.length; i++) band[i] = Math.abs(g1[i]! - g2[i]!);
  const gray = Float32Array.from(f);
  const range = select(gray, Math.floor(0.99 * (gray.length - 1))) - select(gray, Math.floor(0.01 * (gray.length - 1)));
  return range > 0 ? select(band, Math.floor(0.99 * (band.length - 1))) / range : Number.NaN;
}
