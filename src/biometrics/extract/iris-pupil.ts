/**
 * The pupil, found without assuming its size or its place: a circular Hough transform on gradient
 * direction over every radius the image allows (from 1.2 % to 40 % of its short side), whose best
 * centres are each traced ray by ray to their own boundary, and judged on what a pupil is: the
 * darkest, evenest round blob with an edge all round. Reflections are filled in beforehand
 * (iris-reflections.ts), so a reflection inside the pupil reads as pupil.
 *
 * Every size is a fraction of the image's short side or of the candidate's own radius, every gray
 * level a fraction of the image's 1–99 % range.
 *
 * Tested in test/unit/biometrics/extract/iris-segmentation.test.ts and
 * test/unit/biometrics/extract/iris-small-camera.test.ts (pupils of every size, with reflections
 * inside, through the localization).
 */
import { gaussianBlur, sampleInside, sobel, type Sobel } from '../image/filters.js';
import type { Circle } from './iris-geometry.js';

export const PUPIL_RAYS = 64;
/**
 * Each ray's angle θ = 2πk / PUPIL_RAYS, and cos θ, sin θ, cos 2θ, sin 2θ of it: what the rays,
 * the harmonic fits and the outlines read. The same doubles as calling Math.cos and Math.sin each
 * time, which cost some 12 % of a trace (some 85 traces an eye).
 */
const RAY_T = Float64Array.from({ length: PUPIL_RAYS }, (_, k) => (2 * Math.PI * k) / PUPIL_RAYS);
const COS = RAY_T.map((t) => Math.cos(t));
const SIN = RAY_T.map((t) => Math.sin(t));
const COS2 = RAY_T.map((t) => Math.cos(2 * t));
const SIN2 = RAY_T.map((t) => Math.sin(2 * t));

/** A float image and its size. */
export interface Plane {
  f: Float32Array;
  w: number;
  h: number;
  /** 1 where the image was filled in (reflections): no boundary is trusted there. */
  holes?: Uint8Array;
}

/** A pupil boundary traced ray by ray and what it says. */
export interface PupilTrace {
  /** Circle through the boundary (centre from the first harmonic, radius the mean). */
  circle: Circle;
  /** Minor over major axis of the boundary (1 = round), from its second harmonic. */
  aspect: number;
  /** Gray step across the boundary, per ray (NaN: the ray leaves the image). */
  steps: Float64Array;
  /** Boundary radius per ray, from the traced circle's centre. */
  radii: Float64Array;
  /** Median step. */
  contrast: number;
  /** 25th-percentile step: an edge all round has it near the median, a blob astride an edge near 0. */
  edgeAllRound: number;
  /** Median width of the edge in pixels: the step over the steepest slope (a step blurred by a Gaussian of σ px is 2.5 σ wide). */
  edgeWidth: number;
  /** Mean and spread of the gray level inside (to 0.7 r). */
  inside: number;
  spread: number;
  /** Mean gray level just outside (1.15–1.4 r). */
  outside: number;
  /** Fraction of the rays that stay in the image. */
  inImage: number;
  /** Fraction of the rays whose traced boundary the fitted outline explains (within 4 % of r). */
  fitted: number;
  /** RMS distance of those rays' boundary from the fitted outline, over its radius. */
  fitError: number;
}

/** Where percentileOf sorts (grown as needed): a trace reads a dozen percentiles of at most 64 values. */
let sortScratch = new Float64Array(PUPIL_RAYS);

function percentileOf(v: ArrayLike<number>, p: number): number {
  const n = v.length;
  if (!n) return NaN;
  if (sortScratch.length < n) sortScratch = new Float64Array(n);
  for (let i = 0; i < n; i++) sortScratch[i] = v[i]!;
  const s = sortScratch.subarray(0, n).sort();
  return s[Math.min(n - 1, Math.max(0, Math.floor(p * (n - 1))))]!;
}

/** ρ(θ) of harmonic coefficients [r₀, c, d, a, b] on ray k (θ = 2πk / PUPIL_RAYS). */
function harmonic(c: number[], k: number): number {
  return c[0]! + c[1]! * COS[k]! + c[2]! * SIN[k]! + c[3]! * COS2[k]! + c[4]! * SIN2[k]!;
}

/**
 * Least-squares fit of ρ(θ) = r₀ + c cos θ + d sin θ + a cos 2θ + b sin 2θ to ρ = `radii[k]` on the
 * rays `rays` (θ = 2πk / PUPIL_RAYS); null when singular.
 */
function fitHarmonics(rays: number[], radii: Float64Array): number[] | null {
  const m = 5;
  const A = Array.from({ length: m }, () => new Float64Array(m + 1));
  const f = new Float64Array(m);
  for (const k of rays) {
    f[0] = 1;
    f[1] = COS[k]!;
    f[2] = SIN[k]!;
    f[3] = COS2[k]!;
    f[4] = SIN2[k]!;
    for (let r = 0; r < m; r++) {
      for (let c = 0; c < m; c++) A[r]![c]! += f[r]! * f[c]!;
      A[r]![m]! += f[r]! * radii[k]!;
    }
  }
  for (let col = 0; col < m; col++) {
    let piv = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(A[r]![col]!) > Math.abs(A[piv]![col]!)) piv = r;
    if (Math.abs(A[piv]![col]!) < 1e-9) return null;
    [A[col], A[piv]] = [A[piv]!, A[col]!];
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = A[r]![col]! / A[col]![col]!;
      for (let c = col; c <= m; c++) A[r]![c]! -= f * A[col]![c]!;
    }
  }
  return A.map((row, i) => row[m]! / row[i]!);
}

const inside = (p: Plane, x: number, y: number) => x >= 0 && y >= 0 && x <= p.w - 1 && y <= p.h - 1;

/**
 * Traces the boundary of the dark blob round `c`: along each ray, between 0.6 r and 1.5 r, the
 * first clear rise above the blob's own level (slope over ±6 % of r); then ρ(θ) fitted with two harmonics by least squares, refitted
 * without the rays it does not explain (lashes merging with the pupil, an eyelid across it).
 * `rise`: the share of the way from the blob's level to the brightest the ray reaches that counts
 * as a clear rise (default 0.2).
 */
export function tracePupil(p: Plane, c: Circle, rise = 0.2): PupilTrace {
  const r = Math.max(1.5, c.r);
  const dr = Math.max(0.25, r / 32);
  const m = Math.max(1, Math.round(Math.max(0.06 * r, 0.75) / dr));
  const r0 = 0.35 * r,
    r1 = 1.75 * r;
  const n = Math.floor((r1 - r0) / dr) + 1;
  const prof = new Float64Array(n);
  const radii = new Float64Array(PUPIL_RAYS).fill(NaN);
  // The pupil's own level and noise: median and MAD of the samples within 0.45 r of the centre.
  const near: number[] = [];
  for (const f of [0, 0.15, 0.3, 0.45])
    for (let k = 0; k < PUPIL_RAYS; k += f === 0 ? PUPIL_RAYS : 4) {
      const x = c.x + f * r * COS[k]!,
        y = c.y + f * r * SIN[k]!;
      if (inside(p, x, y)) near.push(sampleInside(p.f, p.w, p.h, x, y));
    }
  const level = percentileOf(near, 0.5);
  const noise =
    1.4826 *
    percentileOf(
      near.map((v) => Math.abs(v - level)),
      0.5,
    );
  let inImage = 0;
  for (let k = 0; k < PUPIL_RAYS; k++) {
    // The ray's samples move monotonically along it (each coordinate is monotonic in j, rounding
    // included), so it stays in the image when both its ends do.
    const cs = COS[k]!,
      sn = SIN[k]!,
      tEnd = r0 + (n - 1) * dr;
    if (!inside(p, c.x + r0 * cs, c.y + r0 * sn) || !inside(p, c.x + tEnd * cs, c.y + tEnd * sn)) continue;
    for (let j = 0; j < n; j++) prof[j] = sampleInside(p.f, p.w, p.h, c.x + (r0 + j * dr) * cs, c.y + (r0 + j * dr) * sn);
    inImage++;
    const ja = Math.max(m, Math.round((0.45 * r - r0) / dr)),
      jb = Math.min(n - 1 - m, Math.round((1.5 * r - r0) / dr));
    // Walking out, the boundary is where the ray first rises clearly above the pupil's level (by
    // default a fifth of the way to the brightest it reaches, and four times the pupil's noise), placed at
    // the steepest point within 12 % of r of that crossing. The first rise, not the steepest: a
    // dark iris round the pupil has a second, often steeper, rise at the limbus, and iris texture
    // next to the pupil steps on its own.
    let top = level;
    for (let j = ja; j <= jb; j++) top = Math.max(top, prof[j]!);
    const crossing = level + Math.max(4 * noise, rise * (top - level));
    let j0 = -1;
    for (let j = Math.max(0, ja - m); j <= jb; j++)
      if (prof[j]! >= crossing) {
        j0 = j;
        break;
      }
    if (j0 < 0 || top - level <= 0) continue;
    const d = Math.max(1, Math.round((0.12 * r) / dr));
    let best = 0,
      at = NaN;
    for (let j = Math.max(m, j0 - d); j <= Math.min(n - 1 - m, j0 + d); j++) {
      const s = prof[j + m]! - prof[j - m]!;
      if (s > best) {
        best = s;
        at = r0 + j * dr;
      }
    }
    // A boundary through a filled-in reflection is made up: the ray does not count.
    if (p.holes && Number.isFinite(at)) {
      let hit = false;
      for (let q = at - 2; q <= at + 2 && !hit; q += 0.5) {
        const x = Math.round(c.x + q * COS[k]!),
          y = Math.round(c.y + q * SIN[k]!);
        if (x >= 0 && y >= 0 && x < p.w && y < p.h && p.holes[y * p.w + x]) hit = true;
      }
      if (hit) continue;
    }
    radii[k] = at;
  }
  // Fit ρ(θ) on the rays with a rise, then refit without those it does not explain.
  let keep: number[] = [];
  for (let k = 0; k < PUPIL_RAYS; k++) if (Number.isFinite(radii[k]!)) keep.push(k);
  let coef: number[] | null = null;
  for (let iter = 0; iter < 5 && keep.length >= 10; iter++) {
    coef = fitHarmonics(keep, radii);
    if (!coef) break;
    const cf = coef;
    const res = keep.map((k) => Math.abs(radii[k]! - harmonic(cf, k)));
    const mad = 1.4826 * percentileOf(res, 0.5);
    const next = keep.filter((_, i) => res[i]! <= Math.max(0.5, 0.04 * r, 2.5 * mad));
    if (next.length === keep.length || next.length < 10) break;
    keep = next;
  }
  let fitted = 0,
    fitError = 1;
  if (coef) {
    const cf = coef;
    let sq = 0;
    for (const k of keep) sq += (radii[k]! - harmonic(cf, k)) ** 2;
    fitted = keep.length / PUPIL_RAYS;
    fitError = Math.sqrt(sq / Math.max(1, keep.length)) / Math.max(1e-6, cf[0]!);
  }
  let circle: Circle = { x: c.x, y: c.y, r: c.r };
  let aspect = 1;
  // The boundary's ellipse part (second harmonic) about the fitted centre.
  let shape: [number, number] = [0, 0];
  if (coef && coef[0]! > 0.5) {
    const [q0, c1, d1, a2, b2] = coef as [number, number, number, number, number];
    circle = { x: c.x + c1, y: c.y + d1, r: q0 };
    const amp = Math.min(0.95 * q0, Math.sqrt(a2 * a2 + b2 * b2));
    aspect = (q0 - amp) / (q0 + amp);
    shape = [a2, b2];
  }
  // The aspect from the directions eyelids leave alone: the width between the left and right ends
  // (rays within 20° of horizontal) against the depth from their mid-height down to the lower end
  // (rays within 30° of straight down). The upper lid and its lashes often cover or merge with the
  // top of the pupil, which would make a round pupil look squashed; a gaze turned away narrows the
  // pupil in width or in depth, top or not.
  // (Sums in plain loops, in the order of `keep`: arrays of points, empty on some traces, made V8
  // drop this function's optimized code again and again.)
  let nLeft = 0,
    nRight = 0,
    nLow = 0,
    leftX = 0,
    rightX = 0,
    lowY = 0,
    sideY = 0;
  for (const k of keep) {
    if (COS[k]! < -0.94) {
      nLeft++;
      leftX += c.x + radii[k]! * COS[k]!;
      sideY += c.y + radii[k]! * SIN[k]!;
    } else if (COS[k]! > 0.94) {
      nRight++;
      rightX += c.x + radii[k]! * COS[k]!;
    }
    if (SIN[k]! > 0.87) {
      nLow++;
      lowY += c.y + radii[k]! * SIN[k]!;
    }
  }
  if (nLeft >= 2 && nRight >= 2 && nLow >= 2) {
    // The left ends' heights, then the right ends', summed in that order.
    for (const k of keep) if (COS[k]! > 0.94) sideY += c.y + radii[k]! * SIN[k]!;
    const halfWidth = (rightX / nRight - leftX / nLeft) / 2;
    const depth = lowY / nLow - sideY / (nLeft + nRight);
    if (halfWidth > 0 && depth > 0) aspect = Math.min(halfWidth, depth) / Math.max(halfWidth, depth);
  }
  // One object literal, its fields always in this order (not a spread of measurePupil's result,
  // and never the caller's circle object, whose shape varies): V8 keeps its optimized code for
  // this function and its callers instead of dropping it again and again on a new object shape.
  const measured = measurePupil(p, circle, shape);
  return {
    circle: measured.circle,
    aspect,
    steps: measured.steps,
    radii: measured.radii,
    contrast: measured.contrast,
    edgeAllRound: measured.edgeAllRound,
    edgeWidth: measured.edgeWidth,
    inside: measured.inside,
    spread: measured.spread,
    outside: measured.outside,
    inImage: inImage / PUPIL_RAYS,
    fitted,
    fitError,
  };
}

/**
 * Steps, edge width and levels of a pupil boundary: the circle `c` bent by the ellipse part
 * `shape` = [a, b] (ρ(θ) = r + a cos 2θ + b sin 2θ), so an off-axis pupil is measured on its own
 * outline.
 */
function measurePupil(
  p: Plane,
  c: Circle,
  shape: [number, number] = [0, 0],
): Omit<PupilTrace, 'aspect' | 'inImage' | 'fitted' | 'fitError'> {
  const r = Math.max(1.5, c.r);
  const dr = Math.max(0.25, r / 32);
  const steps = new Float64Array(PUPIL_RAYS).fill(NaN);
  const radii = new Float64Array(PUPIL_RAYS).fill(NaN);
  const widths: number[] = [];
  const ins: number[] = [];
  const outs: number[] = [];
  const m = Math.max(1, Math.round(0.5 / dr));
  const prof = new Float64Array(Math.ceil((1.4 * r + 1e-9) / dr) + 2);
  let len = 0;
  const at = (q: number) => Math.max(0, Math.min(len - 1, Math.round((q * r - 0.3 * r) / dr)));
  const mean = (a: number, b: number) => {
    const ja = at(a),
      jb = at(b);
    let s = 0;
    for (let j = ja; j <= jb; j++) s += prof[j]!;
    return s / (jb - ja + 1);
  };
  for (let k = 0; k < PUPIL_RAYS; k++) {
    len = 0;
    let ok = true;
    for (let q = 0.3 * r; q <= 1.7 * r + 1e-9; q += dr) {
      const x = c.x + q * COS[k]!,
        y = c.y + q * SIN[k]!;
      if (!inside(p, x, y)) {
        ok = false;
        break;
      }
      prof[len++] = sampleInside(p.f, p.w, p.h, x, y);
    }
    if (!ok) continue;
    const e = 1 + (shape[0] * COS2[k]! + shape[1] * SIN2[k]!) / r;
    // The boundary on this ray: the steepest rise within 15 % of r of the outline; the step across
    // it between bands 12–30 % of r either side, and its width, the step over that slope.

    let slope = 0,
      where = NaN;
    for (let j = Math.max(m, at(e - 0.15)); j <= Math.min(len - 1 - m, at(e + 0.15)); j++) {
      const d = (prof[j + m]! - prof[j - m]!) / (2 * m * dr);
      if (d > slope) {
        slope = d;
        where = 0.3 * r + j * dr;
      }
    }
    const b = Number.isFinite(where) ? where / r : e;
    // (At least 1.5 and 3 px: a small pupil's edge is as wide in pixels as a large one's.)
    const lo = Math.max(0.12, 1.5 / r),
      hi = Math.max(0.3, 3 / r);
    const step = mean(b + lo, b + hi) - mean(b - hi, b - lo);
    steps[k] = step;
    radii[k] = where;
    if (step > 0 && slope > 0) widths.push(step / slope);
    ins.push(mean(0, 0.7 * e));
    outs.push(mean(1.15 * e, 1.4 * e));
  }
  const valid: number[] = [];
  for (let k = 0; k < PUPIL_RAYS; k++) if (Number.isFinite(steps[k]!)) valid.push(steps[k]!);
  const inSorted = percentileOf(ins, 0.5);
  let spread = 0;
  if (ins.length) {
    // Spread inside: over rings at 0.25, 0.5 and 0.7 of the outline.
    let s = 0,
      sq = 0,
      cnt = 0;
    for (const f of [0.25, 0.5, 0.7])
      for (let k = 0; k < PUPIL_RAYS; k += 2) {
        const q = f * (r + shape[0] * COS2[k]! + shape[1] * SIN2[k]!);
        const x = c.x + q * COS[k]!,
          y = c.y + q * SIN[k]!;
        if (!inside(p, x, y)) continue;
        const v = sampleInside(p.f, p.w, p.h, x, y);
        s += v;
        sq += v * v;
        cnt++;
      }
    spread = cnt ? Math.sqrt(Math.max(0, sq / cnt - (s / cnt) ** 2)) : Infinity;
  }
  return {
    circle: c,
    steps,
    radii,
    contrast: percentileOf(valid, 0.5),
    edgeAllRound: percentileOf(valid, 0.25),
    edgeWidth: widths.length >= PUPIL_RAYS / 6 ? percentileOf(widths, 0.5) : Infinity,
    inside: inSorted,
    spread,
    outside: percentileOf(outs, 0.5),
  };
}

/** The blur before the Hough transform's gradients: half a percent of the short side, at least 1 px. */
export function houghSigma(p: Plane): number {
  return Math.max(1, 0.005 * Math.min(p.w, p.h));
}

/**
 * Centres and radii of dark round blobs: a circular Hough transform on gradient direction. Every
 * strong edge pixel (above the 85th percentile of the gradient magnitude) votes, for every radius,
 * for the point that far from it against its gradient (towards the darker side). Each radius
 * (radii 12 % apart) votes into a grid of cells an eighth of the radius wide (at least 1.5 px), and a centre's score is the votes of
 * the 3×3 cells round it over the circumference: the fraction of a circle that has an edge facing
 * out. Local maxima of every radius, best first. `grad`: the Sobel gradients of the plane blurred
 * by houghSigma, when the caller has them.
 */
export function houghDarkCircles(
  p: Plane,
  rMin: number,
  rMax: number,
  max = 40,
  grad: Sobel = sobel(gaussianBlur(p.f, p.w, p.h, houghSigma(p)), p.w, p.h),
): Array<Circle & { support: number }> {
  const { w, h } = p;
  const n = w * h;
  const { gx, gy, mag, max: maxMag } = grad;
  // The 85th percentile of the magnitude from a histogram.
  const hist = new Int32Array(512);
  for (let i = 0; i < n; i++) hist[Math.min(511, Math.floor((mag[i]! / (maxMag || 1)) * 512))]!++;
  let thr = 0;
  for (let b = 0, acc = 0; b < 512; b++) {
    acc += hist[b]!;
    if (acc >= 0.85 * n) {
      thr = ((b + 1) / 512) * maxMag;
      break;
    }
  }
  let count = 0;
  for (let i = 0; i < n; i++) if (mag[i]! > thr) count++;
  const ex = new Float32Array(count),
    ey = new Float32Array(count),
    ux = new Float32Array(count),
    uy = new Float32Array(count);
  for (let i = 0, e = 0; i < n; i++)
    if (mag[i]! > thr) {
      const x = i % w;
      ex[e] = x;
      ey[e] = (i - x) / w;
      ux[e] = gx[i]! / mag[i]!;
      uy[e++] = gy[i]! / mag[i]!;
    }
  const found: Array<Circle & { support: number }> = [];
  const edges: Edges = { ex, ey, ux, uy, count };
  const buf = {
    acc: new Int32Array(0),
    box: new Float32Array(0),
  };
  for (let r = rMin; r <= rMax; r *= 1.12) found.push(...circlesAtRadius(edges, w, h, r, buf));
  found.sort((a, b) => b.support - a.support);
  const picked: Array<Circle & { support: number }> = [];
  for (const c of found) {
    if (picked.some((q) => Math.hypot(q.x - c.x, q.y - c.y) < 0.5 * Math.min(q.r, c.r) && Math.max(q.r, c.r) < 1.35 * Math.min(q.r, c.r)))
      continue;
    picked.push(c);
    if (picked.length >= max) break;
  }
  return picked;
}

/** Whether a[i] is at least each of its 8 neighbours on a grid `stride` wide. */
function isLocalMax(a: Float32Array, i: number, stride: number): boolean {
  const v = a[i]!;
  return !(
    a[i - 1]! > v ||
    a[i + 1]! > v ||
    a[i - stride]! > v ||
    a[i + stride]! > v ||
    a[i - stride - 1]! > v ||
    a[i - stride + 1]! > v ||
    a[i + stride - 1]! > v ||
    a[i + stride + 1]! > v
  );
}

/** Strong edge pixels: position and unit gradient (towards the brighter side). */
interface Edges {
  ex: Float32Array;
  ey: Float32Array;
  ux: Float32Array;
  uy: Float32Array;
  count: number;
}

/**
 * houghDarkCircles at one radius: the edges' votes into cells an eighth of r wide (at least
 * 1.5 px), their 3×3 sums, and the best six local maxima with at least a fifth of the circle (and
 * 8 votes). `buf` holds the vote grids from one radius to the next. (A function of its own, so
 * that V8 optimizes each radius's loops early instead of the whole transform at once.)
 */
function circlesAtRadius(
  edges: Edges,
  w: number,
  h: number,
  r: number,
  buf: { acc: Int32Array; box: Float32Array },
): Array<Circle & { support: number }> {
  const { ex, ey, ux, uy, count } = edges;
  const cell = Math.max(1.5, r / 8),
    inv = 1 / cell;
  const aw = Math.ceil(w / cell) + 1,
    ah = Math.ceil(h / cell) + 1;
  const size = aw * ah;
  if (buf.acc.length < size) {
    buf.acc = new Int32Array(size);
    buf.box = new Float32Array(size);
  } else buf.acc.fill(0, 0, size);
  const { acc, box } = buf;
  for (let e = 0; e < count; e++) {
    const fx = (ex[e]! - r * ux[e]!) * inv + 0.5,
      fy = (ey[e]! - r * uy[e]!) * inv + 0.5;
    if (fx >= 0 && fy >= 0 && fx < aw && fy < ah) acc[(fy | 0) * aw + (fx | 0)]!++;
  }
  // 3×3 sums in one pass: a running window of three column sums along each row. (Whole votes,
  // so the sums are exact in any order.)
  for (let ay = 1; ay < ah - 1; ay++) {
    const o = ay * aw;
    let c0 = acc[o - aw]! + acc[o]! + acc[o + aw]!,
      c1 = acc[o - aw + 1]! + acc[o + 1]! + acc[o + aw + 1]!;
    for (let ax = 1; ax < aw - 1; ax++) {
      const i = o + ax;
      const c2 = acc[i - aw + 1]! + acc[i + 1]! + acc[i + aw + 1]!;
      box[i] = c0 + c1 + c2;
      c0 = c1;
      c1 = c2;
    }
  }
  // At least a fifth of the circle (and 8 votes); the best 6 of each radius.
  const minVotes = Math.max(8, 0.2 * 2 * Math.PI * r);
  const top: Array<Circle & { support: number }> = [];
  for (let ay = 2; ay < ah - 2; ay++)
    for (let ax = 2; ax < aw - 2; ax++) {
      const i = ay * aw + ax;
      const v = box[i]!;
      if (v < minVotes) continue;
      if (!isLocalMax(box, i, aw)) continue;
      const support = v / (2 * Math.PI * r);
      if (top.length === 6 && support <= top[5]!.support) continue;
      top.push({ x: ax * cell, y: ay * cell, r, support });
      top.sort((a, b) => b.support - a.support);
      if (top.length > 6) top.pop();
    }
  return top;
}

/** Summed-area table (w+1)×(h+1). */
function integral(f: Float32Array, w: number, h: number): Float64Array {
  const s = new Float64Array((w + 1) * (h + 1));
  for (let y = 0; y < h; y++) {
    let row = 0;
    for (let x = 0; x < w; x++) {
      row += f[y * w + x]!;
      s[(y + 1) * (w + 1) + x + 1] = s[y * (w + 1) + x + 1]! + row;
    }
  }
  return s;
}

/**
 * Box edges [lo, hi) along one axis for grid positions c = r + g·step, g = 0..n−1: round(c − a)
 * and round(c + a), clipped to 0..size, the same for every row (or column) of the grid.
 */
function boxEdges(n: number, r: number, step: number, a: number, size: number): [Int32Array, Int32Array] {
  const lo = new Int32Array(n),
    hi = new Int32Array(n);
  for (let g = 0; g < n; g++) {
    const c = r + g * step;
    lo[g] = Math.max(0, Math.min(size, Math.round(c - a)));
    hi[g] = Math.max(0, Math.min(size, Math.round(c + a)));
  }
  return [lo, hi];
}

/**
 * Centres of dark blobs by darkness alone: at every scale (radii 20 % apart), the boxes darker than
 * the ring round them by at least 5 % of the gray range that are local maxima of that contrast,
 * the three darkest of each scale. The pupil is the darkest thing in an eye, where the Hough
 * votes of a small pupil can be outnumbered by lash gaps and hair.
 */
export function darkBlobs(p: Plane, rMin: number, rMax: number, range: number): Circle[] {
  const { f, w, h } = p;
  const s = integral(f, w, h);
  const out: Circle[] = [];
  for (let r = rMin; r <= rMax; r *= 1.2) blobsAtScale(s, w, h, r, range, out);
  return out;
}

/**
 * darkBlobs at one scale (radius r; `s` the summed-area table of a w × h image): the three
 * darkest of its local contrast maxima added to `out`. (A function of its own, so that V8
 * optimizes each scale's loops early instead of the whole search at once.)
 */
function blobsAtScale(s: Float64Array, w: number, h: number, r: number, range: number, out: Circle[]): void {
  const a = 0.7 * r,
    b = 1.5 * r,
    step = Math.max(1, Math.round(r / 4));
  const gw = Math.floor((w - 2 * r) / step) + 1,
    gh = Math.floor((h - 2 * r) / step) + 1;
  if (gw < 3 || gh < 3) return;
  const contrast = new Float32Array(gw * gh),
    inner = new Float32Array(gw * gh);
  const nIn = (2 * a) ** 2,
    nAll = (2 * b) ** 2;
  // Box means from the summed-area table, the boxes' edges worked out once per column and row.
  const [ax0, ax1] = boxEdges(gw, r, step, a, w),
    [bx0, bx1] = boxEdges(gw, r, step, b, w);
  const [ay0, ay1] = boxEdges(gh, r, step, a, h),
    [by0, by1] = boxEdges(gh, r, step, b, h);
  const W = w + 1;
  for (let gy = 0; gy < gh; gy++) {
    const iy0 = ay0[gy]! * W,
      iy1 = ay1[gy]! * W,
      jy0 = by0[gy]! * W,
      jy1 = by1[gy]! * W;
    const ih = ay1[gy]! - ay0[gy]!,
      jh = by1[gy]! - by0[gy]!;
    for (let gx = 0; gx < gw; gx++) {
      const x0 = ax0[gx]!,
        x1 = ax1[gx]!,
        u0 = bx0[gx]!,
        u1 = bx1[gx]!;
      const ni = (x1 - x0) * ih,
        nj = (u1 - u0) * jh;
      const m = ni > 0 ? (s[iy1 + x1]! - s[iy0 + x1]! - s[iy1 + x0]! + s[iy0 + x0]!) / ni : NaN;
      const all = nj > 0 ? (s[jy1 + u1]! - s[jy0 + u1]! - s[jy1 + u0]! + s[jy0 + u0]!) / nj : NaN;
      contrast[gy * gw + gx] = (all * nAll - m * nIn) / (nAll - nIn) - m;
      inner[gy * gw + gx] = m;
    }
  }
  const atScale: Array<Circle & { inner: number }> = [];
  for (let gy = 1; gy < gh - 1; gy++)
    for (let gx = 1; gx < gw - 1; gx++) {
      const i = gy * gw + gx;
      const c = contrast[i]!;
      if (c < 0.05 * range) continue;
      if (!isLocalMax(contrast, i, gw)) continue;
      atScale.push({ x: r + gx * step, y: r + gy * step, r, inner: inner[i]! });
    }
  atScale.sort((q, t) => q.inner - t.inner);
  for (const c of atScale.slice(0, 3)) out.push({ x: c.x, y: c.y, r: c.r });
}
