/**
 * Iris segmentation of a near-infrared eye image: the pupil (dark blob, then an
 * integro-differential refinement of its circle), the limbus (integro-differential search on the
 * left and right arcs, which eyelids do not cover), the eyelids (parabolic edges over the iris)
 * and a per-pixel noise mask (eyelashes, specular reflections). An eye that cannot give a code is
 * refused with the reason: closed, off-axis, too small or blurred.
 */
import { AgentError } from '../../core/errors.js';
import { gaussianBlur, sampleBilinear } from '../image/filters.js';
import type { GrayImage } from '../image/gray-image.js';
import type { Circle } from './iris-geometry.js';

export type IrisRefusal = 'closed' | 'off-axis' | 'too small' | 'blurred';

export interface Eyelid {
  /** Lid edge y = y0 + k·(x − cx)² (k < 0 for the lower lid); null when the lid does not cover the iris. */
  y0: number;
  k: number;
  cx: number;
}

export interface IrisSegmentation {
  pupil: Circle;
  iris: Circle;
  upperLid: Eyelid | null;
  lowerLid: Eyelid | null;
  /** Pupil-edge sharpness 0..1 (jump over ±1.5 px ÷ jump over ±6 px). */
  sharpness: number;
  /** Valid iris pixels (1) of the image: inside the lids, no lash, no reflection. */
  valid(x: number, y: number): boolean;
}

export const IRIS_LIMITS = {
  /** Smallest usable iris radius in pixels of a 640×480 image (ISO 29794-6 asks ≥ 80 for good quality). */
  minIrisRadius: 60,
  /** Pupil blob axis ratio below which the gaze is off-axis. */
  minAxisRatio: 0.8,
  minSharpness: 0.55,
  /** Darkest gray level still counted as iris (eyelashes are darker). */
  lashLevel: 50,
  /** Brightest gray level still counted as iris (specular reflections are brighter). */
  reflectionLevel: 225,
};

export function refuse(reason: IrisRefusal, detail: string, context: Record<string, unknown> = {}): AgentError {
  const hints: Record<IrisRefusal, string> = {
    closed: 'ask the person to open the eye wide and look into the camera',
    'off-axis': 'ask the person to look straight into the camera',
    'too small': 'ask the person to come closer to the camera',
    blurred: 'ask the person to hold still at the marked distance (the image is out of focus)',
  };
  return new AgentError('BIOMETRICS_UNUSABLE_CAPTURE', `unusable eye image: ${reason} (${detail})`, { reason, ...context }, { hint: hints[reason], retryable: true });
}

interface Blob {
  area: number;
  cx: number;
  cy: number;
  axisRatio: number;
}

/** The largest dark blob of a 1/f-downsampled image (full-resolution units). */
function darkestBlob(img: GrayImage, f: number, level: number): Blob | null {
  const w = Math.floor(img.width / f), h = Math.floor(img.height / f);
  const dark = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let yy = 0; yy < f; yy++) {
        const row = (y * f + yy) * img.width + x * f;
        for (let xx = 0; xx < f; xx++) s += img.pixels[row + xx]!;
      }
      dark[y * w + x] = s / (f * f) < level ? 1 : 0;
    }
  }
  const label = new Int32Array(w * h);
  const stack: number[] = [];
  let best: Blob | null = null;
  let next = 0;
  for (let start = 0; start < w * h; start++) {
    if (!dark[start] || label[start]) continue;
    next++;
    let n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    stack.push(start);
    label[start] = next;
    while (stack.length > 0) {
      const p = stack.pop()!;
      const x = p % w, y = (p - x) / w;
      n++; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y;
      const nb = [x > 0 ? p - 1 : -1, x < w - 1 ? p + 1 : -1, y > 0 ? p - w : -1, y < h - 1 ? p + w : -1];
      for (const q of nb) if (q >= 0 && dark[q] && !label[q]) { label[q] = next; stack.push(q); }
    }
    if (best && n <= best.area / (f * f)) continue;
    const mx = sx / n, my = sy / n;
    const cxx = sxx / n - mx * mx, cyy = syy / n - my * my, cxy = sxy / n - mx * my;
    const tr = cxx + cyy, det = cxx * cyy - cxy * cxy;
    const disc = Math.sqrt(Math.max(0, (tr * tr) / 4 - det));
    const l1 = tr / 2 + disc, l2 = Math.max(0, tr / 2 - disc);
    best = { area: n * f * f, cx: (mx + 0.5) * f, cy: (my + 0.5) * f, axisRatio: l1 > 0 ? Math.sqrt(l2 / l1) : 1 };
  }
  return best;
}

/** Mean of the image on an arc set (angles) of a circle, gray levels clipped to [lo, hi]. */
function ringMean(img: Float32Array, w: number, h: number, cx: number, cy: number, r: number, cos: Float64Array, sin: Float64Array, lo: number, hi: number): number {
  let s = 0;
  for (let i = 0; i < cos.length; i++) {
    const v = sampleBilinear(img, w, h, cx + r * cos[i]!, cy + r * sin[i]!);
    s += v < lo ? lo : v > hi ? hi : v;
  }
  return s / cos.length;
}

function arcs(ranges: Array<[number, number]>, n: number): { cos: Float64Array; sin: Float64Array } {
  const cos = new Float64Array(n * ranges.length), sin = new Float64Array(n * ranges.length);
  let k = 0;
  for (const [a, b] of ranges) {
    for (let i = 0; i < n; i++) {
      const t = a + ((b - a) * (i + 0.5)) / n;
      cos[k] = Math.cos(t); sin[k] = Math.sin(t); k++;
    }
  }
  return { cos, sin };
}

/** Best circle by the integro-differential operator: max over centre grid and radii of outer − inner mean. */
function bestCircle(img: Float32Array, w: number, h: number, cx0: number, cy0: number, span: number, step: number, rMin: number, rMax: number, delta: number, ring: { cos: Float64Array; sin: Float64Array }, lo: number, hi: number): { c: Circle; score: number } {
  let best = { c: { x: cx0, y: cy0, r: rMin }, score: -Infinity };
  for (let dy = -span; dy <= span; dy += step) {
    for (let dx = -span; dx <= span; dx += step) {
      const cx = cx0 + dx, cy = cy0 + dy;
      let prev = ringMean(img, w, h, cx, cy, rMin - delta, ring.cos, ring.sin, lo, hi);
      const means: number[] = [];
      for (let r = rMin - delta; r <= rMax + delta; r++) means.push(r === rMin - delta ? prev : ringMean(img, w, h, cx, cy, r, ring.cos, ring.sin, lo, hi));
      for (let i = delta; i < means.length - delta; i++) {
        const score = means[i + delta]! - means[i - delta]!;
        if (score > best.score) best = { c: { x: cx, y: cy, r: rMin - delta + i }, score };
      }
      prev = 0;
    }
  }
  return best;
}

/** Finds an eyelid edge over the iris; sign +1 for the upper lid (skin above, iris below), −1 lower. */
function findLid(img: Float32Array, w: number, h: number, iris: Circle, pupil: Circle, upper: boolean): Eyelid | null {
  const R = iris.r;
  const ks = upper ? [0.3, 0.36, 0.43].map((k) => k / R) : [-0.17, -0.22, -0.27].map((k) => k / R);
  const yFrom = upper ? iris.y - 1.1 * R : pupil.y + pupil.r + 2;
  const yTo = upper ? pupil.y - pupil.r - 2 : iris.y + 1.1 * R;
  let best: Eyelid | null = null;
  let bestScore = 0;
  for (const k of ks) {
    for (let y0 = yFrom; y0 <= yTo; y0 += 1) {
      let s = 0, n = 0;
      for (let i = -12; i <= 12; i++) {
        const x = iris.x + (i / 12) * 0.85 * R;
        const y = y0 + k * (x - iris.x) ** 2;
        if (Math.hypot(x - iris.x, y - iris.y) > R - 4) continue;
        if (Math.hypot(x - pupil.x, y - pupil.y) < pupil.r + 4) continue;
        const a = sampleBilinear(img, w, h, x, y - 3), b = sampleBilinear(img, w, h, x, y + 3);
        s += upper ? a - b : b - a;
        n++;
      }
      if (n < 6) continue;
      const score = s / n;
      if (score > bestScore) { bestScore = score; best = { y0, k, cx: iris.x }; }
    }
  }
  return bestScore >= 25 ? best : null;
}

export function segmentIris(img: GrayImage): IrisSegmentation {
  const { width: w, height: h } = img;
  const scale = Math.min(w / 640, h / 480);
  const blob = darkestBlob(img, 4, 55);
  const minPupilArea = Math.PI * (8 * scale) ** 2;
  if (!blob || blob.area < minPupilArea) throw refuse('closed', 'no pupil is visible', { pupilArea: blob?.area ?? 0 });
  const r0 = Math.sqrt(blob.area / Math.PI);
  if (r0 < 16 * scale) throw refuse('too small', `pupil radius about ${r0.toFixed(0)} px`, { pupilRadius: Number(r0.toFixed(1)) });
  if (blob.axisRatio < IRIS_LIMITS.minAxisRatio) throw refuse('off-axis', `the pupil is seen as an ellipse (axis ratio ${blob.axisRatio.toFixed(2)})`, { axisRatio: Number(blob.axisRatio.toFixed(3)) });

  const raw = new Float32Array(w * h);
  for (let i = 0; i < raw.length; i++) raw[i] = img.pixels[i]!;
  const smooth = gaussianBlur(raw, w, h, 1.5);
  const full = arcs([[0, 2 * Math.PI]], 64);
  // Pupil: dark inside, clipped so reflections and lashes weigh little.
  const coarse = bestCircle(smooth, w, h, blob.cx, blob.cy, Math.max(4, Math.round(r0 * 0.15)) & ~1, 2, Math.max(4, Math.floor(r0 * 0.75)), Math.ceil(r0 * 1.35) + 2, 2, full, 0, 140);
  const pupil = bestCircle(smooth, w, h, coarse.c.x, coarse.c.y, 1, 1, coarse.c.r - 2, coarse.c.r + 2, 2, full, 0, 140).c;
  if (pupil.r < 8 * scale) throw refuse('too small', `pupil radius ${pupil.r} px`, { pupilRadius: pupil.r });

  // Sharpness of the pupil edge.
  const jump = (d: number): number => ringMean(raw, w, h, pupil.x, pupil.y, pupil.r + d, full.cos, full.sin, 0, 140) - ringMean(raw, w, h, pupil.x, pupil.y, pupil.r - d, full.cos, full.sin, 0, 140);
  const wide = jump(6);
  const sharpness = wide > 1 ? Math.max(0, Math.min(1, jump(1.5) / wide)) : 0;

  // Limbus: left and right arcs (lower half a little further), sclera brighter than iris.
  const side = arcs([[-0.6, 0.5], [Math.PI - 0.5, Math.PI + 0.6]], 24);
  const iris0 = bestCircle(smooth, w, h, pupil.x, pupil.y, 3 * Math.max(1, Math.round(pupil.r * 0.1)), 3, Math.round(pupil.r * 1.7), Math.round(pupil.r * 3.8), 3, side, 40, 230);
  const irisFine = bestCircle(smooth, w, h, iris0.c.x, iris0.c.y, 1, 1, iris0.c.r - 4, iris0.c.r + 4, 3, side, 40, 230);
  const iris = irisFine.c;
  if (iris.r < IRIS_LIMITS.minIrisRadius * scale) throw refuse('too small', `iris radius ${iris.r} px, at least ${Math.round(IRIS_LIMITS.minIrisRadius * scale)} needed`, { irisRadius: iris.r });
  if (sharpness < IRIS_LIMITS.minSharpness) throw refuse('blurred', `pupil edge sharpness ${sharpness.toFixed(2)}`, { sharpness: Number(sharpness.toFixed(3)) });

  const upperLid = findLid(smooth, w, h, iris, pupil, true);
  const lowerLid = findLid(smooth, w, h, iris, pupil, false);
  const upperAt = (x: number): number => (upperLid ? upperLid.y0 + upperLid.k * (x - upperLid.cx) ** 2 + 6 : -Infinity);
  const lowerAt = (x: number): number => (lowerLid ? lowerLid.y0 + lowerLid.k * (x - lowerLid.cx) ** 2 - 3 : Infinity);
  const px = img.pixels;
  const valid = (x: number, y: number): boolean => {
    const xi = Math.round(x), yi = Math.round(y);
    if (xi < 2 || yi < 2 || xi >= w - 2 || yi >= h - 2) return false;
    if (y < upperAt(x) || y > lowerAt(x)) return false;
    const v = px[yi * w + xi]!;
    if (v < IRIS_LIMITS.lashLevel) return false;
    for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) if (px[(yi + dy) * w + xi + dx]! > IRIS_LIMITS.reflectionLevel) return false;
    return true;
  };
  return { pupil, iris, upperLid, lowerLid, sharpness, valid };
}
