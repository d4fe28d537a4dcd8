/**
 * The limbus (iris to sclera), constrained by the pupil found: Daugman's integro-differential
 * operator on the two lateral sectors (30° above to 45° below the horizontal on each side, where
 * eyelids rarely reach), over every radius anatomy allows for that pupil (pupil/iris radius ratio
 * 0.1–0.75) and every centre within 12 % of that radius of the pupil's centre (the pupil sits close
 * to the iris's centre). A candidate is scored by its weaker side (one side alone may be an eyelid
 * crease or the eye's corner) and only where the band inside it is still iris (closer to the
 * iris's level next to the pupil than to the band outside): past the limbus the inside band is
 * sclera, and a step there (sclera to skin) is not the iris's edge. Coarse, then fine.
 *
 * Tested in test/unit/biometrics/extract/iris-segmentation.test.ts and
 * test/unit/biometrics/extract/iris-small-camera.test.ts (the limbus of synthetic eyes of every
 * kind, through the localization).
 */
import { sampleInside, sobel, type Sobel } from '../image/filters.js';
import type { Circle } from './iris-geometry.js';
import type { Plane } from './iris-pupil.js';

export interface LimbusOptions {
  /** Smallest and largest pupil/iris radius ratio (default 0.1 and 0.75). */
  minRatio?: number;
  maxRatio?: number;
  /** Largest distance between the iris and pupil centres, as a fraction of the iris radius (default 0.12). */
  maxOffset?: number;
}

export interface Limbus {
  circle: Circle;
  /** The weaker side's step (gray levels). */
  step: number;
  /** Share of the directions round the circle with an edge facing out (0..1). */
  support: number;
  /** Each side's step, left then right (NaN: the side leaves the image). */
  sides: [number, number];
}

const deg = Math.PI / 180;
const SIDE = Array.from({ length: 14 }, (_, k) => (-30 + (75 * k) / 13) * deg);
const RIGHT_COS = Float64Array.from(SIDE, Math.cos),
  RIGHT_SIN = Float64Array.from(SIDE, Math.sin);
const LEFT_COS = Float64Array.from(SIDE, (a) => Math.cos(Math.PI - a)),
  LEFT_SIN = Float64Array.from(SIDE, (a) => Math.sin(Math.PI - a));

const RAYS_COS = Float64Array.from([...RIGHT_COS, ...LEFT_COS]),
  RAYS_SIN = Float64Array.from([...RIGHT_SIN, ...LEFT_SIN]);
const PER_SIDE = SIDE.length;
const NEIGHBOURS = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
  [1, 1],
  [-1, -1],
  [1, -1],
  [-1, 1],
] as const;

/** The p-quantile of the first n values (insertion-sorted in place: n is at most 14). */
function quantileOf(v: Float64Array, n: number, p: number): number {
  for (let i = 1; i < n; i++) {
    const x = v[i]!;
    let j = i - 1;
    while (j >= 0 && v[j]! > x) {
      v[j + 1] = v[j]!;
      j--;
    }
    v[j + 1] = x;
  }
  return v[Math.round(p * (n - 1))]!;
}

/**
 * The limbus round the pupil. Per ray, the step between the bands just outside and just inside a
 * radius; per side, a low quantile over its rays (an eyelid or lashes across some of them do not
 * move it); a candidate scores its weaker side. `grad`: the plane's edges (limbusEdges), which a
 * caller trying several pupils on one plane computes once.
 */
export function findLimbus(p: Plane, pupil: Circle, opts: LimbusOptions = {}, grad: LimbusEdges = limbusEdges(p)): Limbus | null {
  const minRatio = opts.minRatio ?? 0.1,
    maxRatio = opts.maxRatio ?? 0.75,
    maxOffset = opts.maxOffset ?? 0.12;
  const rMin = Math.max(pupil.r / maxRatio, pupil.r + 2);
  // At most as far as one lateral side can still be seen.
  const rMax = Math.min(pupil.r / minRatio, 1.1 * Math.max(pupil.x, p.w - 1 - pupil.x));
  if (!(rMax > rMin)) return null;
  const rays = RAYS_COS.length;
  // The iris's level per ray direction: the band just outside the pupil's edge blur (1.15–1.45
  // pupil radii from the pupil's centre), whatever centre the limbus is tried at.
  const level = new Float64Array(rays);
  for (let k = 0; k < rays; k++) {
    let lv = 0,
      ln = 0;
    for (let r = pupil.r * 1.15; r <= pupil.r * 1.45 + 1e-9; r += 0.5) {
      const x = pupil.x + r * RAYS_COS[k]!,
        y = pupil.y + r * RAYS_SIN[k]!;
      if (x >= 0 && y >= 0 && x <= p.w - 1 && y <= p.h - 1) {
        lv += sampleInside(p.f, p.w, p.h, x, y);
        ln++;
      }
    }
    level[k] = ln ? lv / ln : NaN;
  }
  const g = Math.max(1, 0.025 * rMax);
  const st: LimbusSearch = {
    p,
    pupil,
    rMin,
    rMax,
    maxOffset,
    level,
    steps: new Float64Array(PER_SIDE),
    sums: new Float64Array(0),
    valid: new Int32Array(0),
    best: null,
    bestScore: -Infinity,
    cands: [],
    hereR: 0,
  };
  const cands = st.cands;
  // Coarse: centres on a grid of 2.5 % of the largest radius, every radius (1 px apart, at least
  // 1/60 of the smallest), every other ray; each centre's local maxima over the radius collected.
  const span = maxOffset * rMax;
  const coarseDr = Math.max(1, rMin / 60);
  for (let dy = -span; dy <= span + 1e-9; dy += g)
    for (let dx = -span; dx <= span + 1e-9; dx += g) {
      if (dx * dx + dy * dy > span * span) continue;
      considerCentre(st, pupil.x + dx, pupil.y + dy, rMin, rMax, coarseDr, 2, true);
    }
  let best: Limbus | null = st.best;
  if (!best) return null;
  // Of the strongest distinct candidates, the one whose step is also a circle: scored by its step
  // times how round an edge facing out it has (the share of a whole circle round it with a strong
  // edge facing out, plus the mean graded outward gradient round it: see circleSupport). The
  // lateral steps of an eye's corners or eyelid creases are strong too, but only the limbus is round.
  cands.sort((a, b) => b.score - a.score);
  const distinct: Array<Circle & { score: number }> = [];
  for (const c of cands) {
    if (distinct.length >= 10 || c.score <= 0) break;
    if (distinct.some((d) => Math.abs(d.r - c.r) < 0.08 * d.r && (d.x - c.x) ** 2 + (d.y - c.y) ** 2 < (0.1 * d.r) ** 2)) continue;
    distinct.push(c);
  }
  if (distinct.length) {
    let top = -Infinity;
    for (const c of distinct) {
      const { support, radial } = circleSupport(grad, c);
      const v = c.score * (0.15 + support + radial);
      if (v > top) {
        top = v;
        best = { circle: { x: c.x, y: c.y, r: c.r }, step: c.score, sides: [NaN, NaN], support };
      }
    }
  }
  // Fine: a descent from the chosen centre on every ray, over radii within 8 % of its radius every
  // half pixel, in centre steps of half the coarse grid down to half a pixel, on the same product
  // of step and roundness (the lateral steps fix the centre's x and the radius; the roundness, the
  // lower arc above all, fixes its y).
  const coarse: Circle = (best as Limbus).circle;
  let fine: Limbus = best as Limbus;
  const near = (cx: number, cy: number): number => {
    const sc = considerCentre(st, cx, cy, 0.92 * coarse.r, 1.08 * coarse.r, 0.5, 1, false);
    if (!(sc > 0)) return -Infinity;
    const c = { x: cx, y: cy, r: st.hereR };
    const { support, radial } = circleSupport(grad, c);
    const v = sc * (0.15 + support + radial);
    if (v > fineTop) {
      fineTop = v;
      fine = { circle: c, step: sc, sides: [NaN, NaN], support };
    }
    return v;
  };
  let fineTop = -Infinity;
  let cx = coarse.x,
    cy = coarse.y;
  let here = near(cx, cy);
  for (let step = Math.max(1, g / 2); step >= 0.5; ) {
    let moved = false;
    for (const [dx, dy] of NEIGHBOURS) {
      const v = near(cx + dx * step, cy + dy * step);
      if (v > here) {
        here = v;
        cx += dx * step;
        cy += dy * step;
        moved = true;
        break;
      }
    }
    if (!moved) step /= 2;
  }
  best = fine;
  // A best step at the smallest radius allowed is the pupil's own edge blur or no limbus at all
  // (a lash clump on skin), not an iris.
  if ((best as Limbus).circle.r < 1.03 * rMin) return null;
  return best;
}

/** What the limbus search keeps between the centres it tries (see `considerCentre`). */
interface LimbusSearch {
  p: Plane;
  pupil: Circle;
  rMin: number;
  rMax: number;
  maxOffset: number;
  /** The iris's level per ray direction, next to the pupil. */
  level: Float64Array;
  /** Scratch: one side's steps. */
  steps: Float64Array;
  /** Scratch: per ray, prefix sums of the profile and of the count of samples in the image. */
  sums: Float64Array;
  valid: Int32Array;
  /** The best candidate of all, and its score. */
  best: Limbus | null;
  bestScore: number;
  /** Local maxima over the radius, per centre (when collected). */
  cands: Array<Circle & { score: number }>;
  /** The radius of the best score at the last centre tried. */
  hereR: number;
}

/**
 * The best score at this centre over radii rLo..rHi, sampled every `dr` px on every `every`-th
 * ray (the best of all kept in `st.best`). A function of its own, not a closure in findLimbus: V8
 * optimizes it after the first eyes, where a closure created anew on every call was left to the
 * slower tiers for the first ten or so.
 */
function considerCentre(
  st: LimbusSearch,
  cx: number,
  cy: number,
  rLo: number,
  rHi: number,
  dr: number,
  every: number,
  collect: boolean,
): number {
  const { p, pupil, rMin, rMax, maxOffset, level, steps, cands } = st;
  const rays = RAYS_COS.length;
  let here = -Infinity;
  st.hereR = 0;
  let prevScore = -Infinity,
    prev2Score = -Infinity;
  const off = Math.sqrt((cx - pupil.x) ** 2 + (cy - pupil.y) ** 2);
  rLo = Math.max(rLo, rMin, off / maxOffset);
  rHi = Math.min(rHi, rMax);
  if (rHi < rLo) return here;
  // Bands of 10 % of the radius either side: a limbus is a soft edge. The profile starts at 1.2
  // pupil radii: the iris zone inside a candidate is looked at too.
  const start = Math.min(1.2 * pupil.r, rLo - (Math.max(2, (0.1 * rLo) / dr) + 2) * dr);
  const zone0 = Math.max(0, Math.round((1.2 * pupil.r - start) / dr));
  const n = Math.ceil((rHi + (Math.max(2, (0.1 * rHi) / dr) + 2) * dr - start) / dr) + 1;
  const stride = n + 1;
  if (st.sums.length < rays * stride) {
    st.sums = new Float64Array(rays * stride);
    st.valid = new Int32Array(rays * stride);
  }
  const { sums, valid } = st;
  // Per ray: prefix sums of the profile and of the count of samples in the image.
  for (let k = 0; k < rays; k += every) {
    const c = RAYS_COS[k]!,
      s = RAYS_SIN[k]!;
    let acc = 0,
      cnt = 0;
    const o = k * stride;
    sums[o] = 0;
    valid[o] = 0;
    for (let t = 0; t < n; t++) {
      const r = start + t * dr;
      const x = cx + r * c,
        y = cy + r * s;
      if (x >= 0 && y >= 0 && x <= p.w - 1 && y <= p.h - 1) {
        acc += sampleInside(p.f, p.w, p.h, x, y);
        cnt++;
      }
      sums[o + t + 1] = acc;
      valid[o + t + 1] = cnt;
    }
  }
  const perSide = Math.ceil(PER_SIDE / every);
  for (let t = 0; t < n; t++) {
    const r = start + t * dr;
    if (r < rLo || r > rHi) continue;
    const b = Math.max(2, Math.round((0.1 * r) / dr));
    if (t - b < 0 || t + b > n - 1) continue;
    let sl = NaN,
      sr = NaN;
    for (let sd = 0; sd < 2; sd++) {
      let m = 0;
      for (let j = 0; j < PER_SIDE; j += every) {
        const o = (sd * PER_SIDE + j) * stride;
        // Bands [t-b, t-1] and [t+1, t+b]; each needs half its samples in the image.
        const ci = valid[o + t]! - valid[o + t - b]!,
          co = valid[o + t + b + 1]! - valid[o + t + 1]!;
        if (2 * ci < b || 2 * co < b || !ci || !co) continue;
        const inner = (sums[o + t]! - sums[o + t - b]!) / ci,
          outer = (sums[o + t + b + 1]! - sums[o + t + 1]!) / co;
        const step = outer - inner;
        if (step > 0) {
          // Where the inside band is not iris, the ray says nothing at this radius (an eyelid,
          // the eye's corner): brighter than the zone inside it (from 1.2 pupil radii) by half
          // the step or more, it is sclera or skin; darker than the iris next to the pupil by
          // the step or more, it is the pupil's edge.
          const cz = valid[o + t - b]! - valid[o + zone0]!;
          const zone = t - b > zone0 && cz > 0 ? (sums[o + t - b]! - sums[o + zone0]!) / cz : inner;
          if (inner - zone > step || level[sd * PER_SIDE + j]! - inner > step) continue;
        }
        steps[m++] = step;
      }
      // A side counts when at least 40 % of its rays see iris inside: its 35th-percentile step
      // (an edge on most of them, not a few rays' crease or lash).
      if (m >= 0.4 * perSide) {
        if (sd === 0) sr = quantileOf(steps, m, 0.35);
        else sl = quantileOf(steps, m, 0.35);
      }
    }
    // Both sides where both are seen; one side, discounted, where the other is covered or
    // leaves the image.
    const score =
      Number.isNaN(sl) && Number.isNaN(sr) ? -Infinity : Number.isNaN(sl) ? 0.5 * sr : Number.isNaN(sr) ? 0.5 * sl : Math.min(sl, sr);
    if (collect) {
      // Local maxima over the radius at this centre, for the support check below.
      if (prevScore >= prev2Score && prevScore > score && Number.isFinite(prevScore))
        cands.push({ x: cx, y: cy, r: r - dr, score: prevScore });
      prev2Score = prevScore;
      prevScore = score;
    }
    if (score > st.bestScore) {
      st.bestScore = score;
      st.best = { circle: { x: cx, y: cy, r }, step: score, sides: [sl, sr], support: NaN };
    }
    if (score > here) {
      here = score;
      st.hereR = r;
    }
  }
  return here;
}

/** An image's Sobel gradients and the 80th percentile of their magnitude (`strong`: an edge). */
export interface LimbusEdges extends Sobel {
  strong: number;
}

/** The edges of a plane for findLimbus: computed once per plane, whatever pupils are tried on it. */
export function limbusEdges(p: Plane, g: Sobel = sobel(p.f, p.w, p.h)): LimbusEdges {
  const { mag, max } = g;
  const hist = new Int32Array(256);
  for (let i = 0; i < mag.length; i++) hist[Math.min(255, Math.floor((mag[i]! / (max || 1)) * 256))]!++;
  let strong = max;
  for (let b = 0, acc = 0; b < 256; b++) {
    acc += hist[b]!;
    if (acc >= 0.8 * mag.length) {
      strong = ((b + 1) / 256) * max;
      break;
    }
  }
  return { ...g, strong };
}

const ROUND = 48;
const ROUND_COS = Float64Array.from({ length: ROUND }, (_, k) => Math.cos((2 * Math.PI * k) / ROUND));
const ROUND_SIN = Float64Array.from({ length: ROUND }, (_, k) => Math.sin((2 * Math.PI * k) / ROUND));

/**
 * How round an edge facing out a circle has, over the 48 directions round it, each looked at within
 * 3 % of the radius of the circle. `support`: the share of the directions with a strong edge facing
 * out (gradient within 35° of the radial direction, bright outside). `radial`: the mean over the
 * directions of the strongest outward radial gradient there, as a share of a strong edge (0..1; 0
 * where the image is darker outside). The share alone is flat over centres a few pixels apart (an
 * iris that darkens towards its limbus leaves few rays to the lateral steps, and the centre's height
 * then rests on it alone); the graded term still tells them apart.
 */
export function circleSupport(g: LimbusEdges, c: Circle): { support: number; radial: number } {
  const tol = Math.max(1, 0.03 * c.r);
  let hits = 0,
    radial = 0;
  for (let k = 0; k < ROUND; k++) {
    const u = ROUND_COS[k]!,
      v = ROUND_SIN[k]!;
    let hit = false,
      most = 0;
    for (let d = -tol; d <= tol + 1e-9; d += tol / 2) {
      const x = Math.round(c.x + (c.r + d) * u),
        y = Math.round(c.y + (c.r + d) * v);
      if (x < 1 || y < 1 || x >= g.w - 1 || y >= g.h - 1) continue;
      const i = y * g.w + x;
      const m = g.mag[i]!,
        out = g.gx[i]! * u + g.gy[i]! * v;
      if (out > most) most = out;
      if (!hit && m > g.strong && out > 0.82 * m) hit = true;
    }
    if (hit) hits++;
    if (most > 0) radial += Math.min(1, most / g.strong);
  }
  return { support: hits / ROUND, radial: radial / ROUND };
}
