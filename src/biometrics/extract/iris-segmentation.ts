/**
 * Iris localization for any camera: the pupil (the darkest round blob once specular reflections
 * are filled in, refined by the strongest circular edge), the limbus (Daugman's
 * integro-differential operator on the lateral sectors, where eyelids rarely reach), and the
 * capture checks that refuse an unusable eye, each judged on what was actually found:
 *
 * - closed: no dark round blob with a circular edge anywhere (the eye is shut or not in view);
 * - blurred: the pupil's edge is wide (its equivalent width, step over steepest slope, over 4.5 px
 *   at the working scale and over `maxEdgeWidth` of the iris radius), whatever the contrast between
 *   pupil and iris; judged before size and shape, which a blurred edge makes uncertain;
 * - too-small: the iris found is under `minIrisRadius` px (the eye is too far from the camera);
 * - off-axis: the pupil found, sharp, is an ellipse (its width against its depth below the
 *   centre, where eyelids rarely reach, under `minAspect`).
 *
 * Nothing depends on the frame size: the search runs on a copy of about 320×240 (every scale
 * relative to it), so 640×480, 320×240 and cropped captures are handled alike.
 */
import { AgentError } from '../../core/errors.js';
import { sampleBilinear } from '../image/filters.js';
import type { GrayImage } from '../image/gray-image.js';

export interface Circle {
  x: number;
  y: number;
  r: number;
}

export interface IrisLocalization {
  pupil: Circle;
  iris: Circle;
  /** Pupil edge sharpness 0..1 (1: the edge spreads over at most 4 % of the iris radius, 0: 12 % or more). */
  sharpness: number;
  /** Pupil aspect ratio (minor / major axis of its boundary), 1 = round. */
  aspect: number;
  /** Mean gray step from pupil to iris. */
  pupilContrast: number;
}

export interface IrisCheckOptions {
  /** Smallest acceptable iris radius in pixels (default 40, an iris 80 px across; ISO/IEC 29794-6 calls under 100 px across marginal). */
  minIrisRadius?: number;
  /** Widest acceptable pupil edge as a fraction of the iris radius (default 0.06: 7 px on an iris 220 px across), when it also spans over 4.5 px at the working scale. */
  maxEdgeWidth?: number;
  /** Smallest pupil aspect ratio (minor/major axis of its boundary) before the gaze counts as off-axis (default 0.75). */
  minAspect?: number;
}

function unusable(
  reason: 'closed' | 'off-axis' | 'too-small' | 'blurred',
  message: string,
  context: Record<string, unknown>,
  hint: string,
): AgentError {
  return new AgentError('BIOMETRICS_UNUSABLE_CAPTURE', message, { reason, ...context }, { hint, retryable: true });
}

/** A working copy of an image: float pixels and its scale to the original. */
interface Work {
  f: Float32Array;
  w: number;
  h: number;
  q: number;
}

function downsample(img: GrayImage): Work {
  const { width: W, height: H, pixels } = img;
  // About 240 px on the short side: a 640×480 frame is halved, a 320×240 one kept.
  const q = Math.max(1, Math.round(Math.min(W, H) / 240));
  const w = Math.floor(W / q),
    h = Math.floor(H / q);
  const f = new Float32Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let dy = 0; dy < q; dy++) for (let dx = 0; dx < q; dx++) s += pixels[(y * q + dy) * W + x * q + dx]!;
      f[y * w + x] = s / (q * q);
    }
  return { f, w, h, q };
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

/** Mean over the box [x0, x1) × [y0, y1), clipped to the image. */
function boxMean(s: Float64Array, w: number, h: number, x0: number, y0: number, x1: number, y1: number): number {
  x0 = Math.max(0, Math.min(w, Math.round(x0)));
  x1 = Math.max(0, Math.min(w, Math.round(x1)));
  y0 = Math.max(0, Math.min(h, Math.round(y0)));
  y1 = Math.max(0, Math.min(h, Math.round(y1)));
  const n = (x1 - x0) * (y1 - y0);
  if (n <= 0) return NaN;
  const W = w + 1;
  return (s[y1 * W + x1]! - s[y0 * W + x1]! - s[y1 * W + x0]! + s[y0 * W + x0]!) / n;
}

/**
 * Specular reflections filled in: small spots much brighter than their surroundings (the
 * illuminator's reflection on the cornea, often inside the pupil) are replaced, from their border
 * inwards, by the mean of their already known neighbours, so a reflection in the pupil reads as
 * pupil and leaves no bright hole in it. Large bright areas (skin, sclera) are left alone.
 */
function fillReflections(wk: Work): { image: Float32Array; filled: Uint8Array } {
  const { f, w, h } = wk;
  const s = integral(f, w, h);
  const r = 6;
  const spot = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const v = f[y * w + x]!;
      // Far brighter than around it, by at least half the way to white: the illuminator's
      // reflection (on a dark pupil or iris), not bright iris texture or skin.
      if (v < 140) continue;
      const around = boxMean(s, w, h, x - r, y - r, x + r + 1, y + r + 1);
      if (v - around > Math.max(50, 0.5 * (255 - around))) spot[y * w + x] = 1;
    }
  // Keep small components only (a reflection is a few pixels to a few dozen across).
  const maxArea = Math.max(30, (w * h) / 300);
  const label = new Int32Array(w * h);
  const out = Float32Array.from(f);
  const holes = new Uint8Array(w * h);
  let next = 1;
  const stack: number[] = [];
  const members: number[] = [];
  for (let i = 0; i < spot.length; i++) {
    if (!spot[i] || label[i]) continue;
    members.length = 0;
    stack.push(i);
    label[i] = next;
    while (stack.length) {
      const j = stack.pop()!;
      members.push(j);
      const x = j % w;
      for (const k of [j - 1, j + 1, j - w, j + w]) {
        if (k < 0 || k >= spot.length || (k === j - 1 && x === 0) || (k === j + 1 && x === w - 1)) continue;
        if (spot[k] && !label[k]) {
          label[k] = next;
          stack.push(k);
        }
      }
    }
    next++;
    if (members.length > maxArea) continue;
    // Grow by its halo: the blur around a reflection is brighter than what it covers too, and
    // spreads further round a larger spot.
    const g = Math.min(5, 2 + Math.ceil(0.5 * Math.sqrt(members.length)));
    for (const j of members) {
      const x = j % w,
        y = (j - x) / w;
      for (let dy = -g; dy <= g; dy++)
        for (let dx = -g; dx <= g; dx++) {
          if (dx * dx + dy * dy > g * g) continue;
          const xx = x + dx,
            yy = y + dy;
          if (xx >= 0 && yy >= 0 && xx < w && yy < h) holes[yy * w + xx] = 1;
        }
    }
  }
  const filled = holes.slice();
  // Onion-peel fill.
  let remaining = 0;
  for (const v of holes) remaining += v;
  for (let pass = 0; pass < 64 && remaining > 0; pass++) {
    const done: number[] = [];
    for (let i = 0; i < holes.length; i++) {
      if (!holes[i]) continue;
      const x = i % w;
      let sum = 0,
        n = 0;
      for (const k of [i - 1, i + 1, i - w, i + w, i - w - 1, i - w + 1, i + w - 1, i + w + 1]) {
        if (k < 0 || k >= holes.length || holes[k]) continue;
        const kx = k % w;
        if (Math.abs(kx - x) > 1) continue;
        sum += out[k]!;
        n++;
      }
      if (n >= 2) {
        out[i] = sum / n;
        done.push(i);
      }
    }
    for (const i of done) holes[i] = 0;
    remaining -= done.length;
    if (!done.length) break;
  }
  return { image: out, filled };
}

/** Mean of `src` over a disk (sampled on rings), NaN when mostly outside the image. */
function diskMean(src: Float32Array, w: number, h: number, cx: number, cy: number, r: number): number {
  let sum = 0,
    n = 0;
  for (const f of [0, 0.35, 0.7, 1]) {
    const m = f === 0 ? sampleBilinear(src, w, h, cx, cy) : ringMean(src, w, h, cx, cy, f * r, COS, SIN);
    if (Number.isFinite(m)) {
      sum += m;
      n++;
    }
  }
  return n ? sum / n : NaN;
}

/** Standard deviation of `src` over a disk (sampled on rings). */
function diskSpread(src: Float32Array, w: number, h: number, cx: number, cy: number, r: number): number {
  let sum = 0,
    sq = 0,
    n = 0;
  for (const f of [0.25, 0.5, 0.75, 1]) {
    for (let k = 0; k < RAYS; k += 2) {
      const x = cx + f * r * COS[k]!,
        y = cy + f * r * SIN[k]!;
      if (x < 0 || y < 0 || x > w - 1 || y > h - 1) continue;
      const v = sampleBilinear(src, w, h, x, y);
      sum += v;
      sq += v * v;
      n++;
    }
  }
  return n ? Math.sqrt(Math.max(0, sq / n - (sum / n) ** 2)) : Infinity;
}

/** Mean of `src` along a circle (n points), or NaN when most of it lies outside the image. */
function ringMean(
  src: Float32Array,
  w: number,
  h: number,
  cx: number,
  cy: number,
  r: number,
  cos: Float64Array,
  sin: Float64Array,
): number {
  let s = 0,
    n = 0;
  for (let k = 0; k < cos.length; k++) {
    const x = cx + r * cos[k]!,
      y = cy + r * sin[k]!;
    if (x < 0 || y < 0 || x > w - 1 || y > h - 1) continue;
    s += sampleBilinear(src, w, h, x, y);
    n++;
  }
  return n >= cos.length / 2 ? s / n : NaN;
}

const RAYS = 48;
const COS = Float64Array.from({ length: RAYS }, (_, k) => Math.cos((2 * Math.PI * k) / RAYS));
const SIN = Float64Array.from({ length: RAYS }, (_, k) => Math.sin((2 * Math.PI * k) / RAYS));

/**
 * Pupil candidates: boxes darker than their surroundings (by at least 12 gray levels), the local
 * contrast maxima of every scale, darkest first. Darkness first, because the pupil is the darkest
 * thing in an eye image while the iris, or lashes against bright skin, may have more contrast.
 */
function pupilCandidates(f: Float32Array, w: number, h: number): Circle[] {
  const s = integral(f, w, h);
  const minDim = Math.min(w, h);
  const rMin = Math.max(3, 0.02 * minDim),
    rMax = 0.25 * minDim;
  const found: Array<Circle & { inner: number }> = [];
  const atScale: Array<Circle & { inner: number }> = [];
  for (let r = rMin; r <= rMax; r *= 1.2) {
    const a = 0.7 * r,
      b = 1.5 * r,
      step = Math.max(1, Math.round(r / 4));
    const gw = Math.floor((w - 2 * r) / step) + 1,
      gh = Math.floor((h - 2 * r) / step) + 1;
    if (gw < 1 || gh < 1) continue;
    const contrast = new Float32Array(gw * gh),
      inner = new Float32Array(gw * gh);
    for (let gy = 0; gy < gh; gy++)
      for (let gx = 0; gx < gw; gx++) {
        const x = r + gx * step,
          y = r + gy * step;
        const m = boxMean(s, w, h, x - a, y - a, x + a, y + a);
        const all = boxMean(s, w, h, x - b, y - b, x + b, y + b);
        const nIn = (2 * a) ** 2,
          nAll = (2 * b) ** 2;
        contrast[gy * gw + gx] = (all * nAll - m * nIn) / (nAll - nIn) - m;
        inner[gy * gw + gx] = m;
      }
    for (let gy = 0; gy < gh; gy++)
      for (let gx = 0; gx < gw; gx++) {
        const c = contrast[gy * gw + gx]!;
        if (c < 12) continue;
        let isMax = true;
        for (let dy = -1; dy <= 1 && isMax; dy++)
          for (let dx = -1; dx <= 1; dx++) {
            const xx = gx + dx,
              yy = gy + dy;
            if ((dx || dy) && xx >= 0 && yy >= 0 && xx < gw && yy < gh && contrast[yy * gw + xx]! > c) {
              isMax = false;
              break;
            }
          }
        if (isMax) atScale.push({ x: r + gx * step, y: r + gy * step, r, inner: inner[gy * gw + gx]! });
      }
    // The darkest three of every scale, so a large pupil is not crowded out by small dark spots
    // (lashes) nor a small one by the iris.
    atScale.sort((p, q) => p.inner - q.inner);
    found.push(...atScale.slice(0, 3));
    atScale.length = 0;
  }
  found.sort((p, q) => p.inner - q.inner);
  const picked: Circle[] = [];
  for (const c of found) {
    // The same blob at a neighbouring scale or position; a blob nested in a larger one (the pupil
    // in the iris) is kept.
    if (picked.some((p) => Math.hypot(p.x - c.x, p.y - c.y) < Math.min(p.r, c.r) && Math.max(p.r, c.r) < 1.6 * Math.min(p.r, c.r)))
      continue;
    picked.push({ x: c.x, y: c.y, r: c.r });
    if (picked.length >= 24) break;
  }
  return picked;
}

/**
 * The pupil's boundary traced ray by ray (the strongest outward step between 0.5 r and 1.8 r),
 * its aspect ratio from the boundary points' second moments, and its edge width: the 10–90 %
 * rise of the radial profile averaged over the clean rays.
 */
/** ρ(θ) of harmonic coefficients [r₀, c, d, a, b]. */
function harmonic(c: number[], t: number): number {
  return c[0]! + c[1]! * Math.cos(t) + c[2]! * Math.sin(t) + c[3]! * Math.cos(2 * t) + c[4]! * Math.sin(2 * t);
}

/** Least-squares fit of ρ(θ) = r₀ + c cos θ + d sin θ + a cos 2θ + b sin 2θ; null when singular. */
function fitHarmonics(t: number[], rho: number[]): number[] | null {
  const m = 5;
  const A = Array.from({ length: m }, () => new Float64Array(m + 1));
  for (let i = 0; i < t.length; i++) {
    const f = [1, Math.cos(t[i]!), Math.sin(t[i]!), Math.cos(2 * t[i]!), Math.sin(2 * t[i]!)];
    for (let r = 0; r < m; r++) {
      for (let c = 0; c < m; c++) A[r]![c]! += f[r]! * f[c]!;
      A[r]![m]! += f[r]! * rho[i]!;
    }
  }
  // Gaussian elimination with partial pivoting.
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

interface PupilShape {
  aspect: number;
  width: number;
  contrast: number;
  edge: number;
  typicalEdge: number;
  center: { x: number; y: number };
  circle: Circle | null;
}

/** The pupil's shape, traced from `c` and traced again from the first tracing's centre and size. */
function pupilShape(src: Float32Array, w: number, h: number, c: Circle, filled: Uint8Array, iterations: number): PupilShape {
  // Traced again from the fitted centre until it settles (a seed circle near the pupil's rim
  // sees one side close and the other far).
  let shape = traceShape(src, w, h, c, filled);
  for (let i = 0; i < iterations; i++) {
    const next = traceShape(src, w, h, { x: shape.center.x, y: shape.center.y, r: shape.meanRadius }, filled);
    const moved = Math.hypot(next.center.x - shape.center.x, next.center.y - shape.center.y);
    shape = next;
    if (moved < 0.5) break;
  }
  return shape;
}

function traceShape(src: Float32Array, w: number, h: number, p: Circle, filled: Uint8Array): PupilShape & { meanRadius: number } {
  const xs: number[] = [],
    ys: number[] = [];
  const rs: number[] = [];
  const steps: number[] = [];
  const dr = Math.max(0.25, p.r / 40);
  const d = Math.max(1, p.r * 0.12);
  // Walking out along a ray from the centre, the boundary is where the image first rises clearly
  // above the pupil's own level (its mean near the centre plus 12 gray levels or four times its
  // spread), then placed at the steepest point nearby. The first rise, not the strongest step:
  // iris texture and eyelids have strong steps of their own, and a circle found inside the pupil
  // walks out to its real edge.
  // Median and median absolute deviation near the centre, leaving out filled-in reflections.
  const near: number[] = [];
  for (const f of [0, 0.15, 0.3, 0.45]) {
    for (let k = 0; k < RAYS; k += f === 0 ? RAYS : 3) {
      const x = p.x + f * p.r * COS[k]!,
        y = p.y + f * p.r * SIN[k]!;
      if (x < 0 || y < 0 || x > w - 1 || y > h - 1 || filled[Math.round(y) * w + Math.round(x)]) continue;
      near.push(sampleBilinear(src, w, h, x, y));
    }
  }
  near.sort((a, b) => a - b);
  const inside = near.length ? near[near.length >> 1]! : diskMean(src, w, h, p.x, p.y, 0.4 * p.r);
  const mad = near.length ? near.map((v) => Math.abs(v - inside)).sort((a, b) => a - b)[near.length >> 1]! : 0;
  const level = inside + Math.max(12, 4 * 1.4826 * mad);
  for (let k = 0; k < RAYS; k++) {
    let found = NaN,
      step = 0;
    let prev = inside;
    for (let r = 0.2 * p.r; r <= 4 * p.r; r += dr) {
      const x = p.x + r * COS[k]!,
        y = p.y + r * SIN[k]!;
      if (x < 0 || y < 0 || x > w - 1 || y > h - 1) break;
      const v = sampleBilinear(src, w, h, x, y);
      if (v > level) {
        const crossing = r - dr * ((v - level) / Math.max(1e-6, v - prev));
        // Then the steepest point within ±d of the crossing: the level finds the edge, the slope
        // places it (texture next to the pupil shifts a level crossing, not the steepest step).
        step = -Infinity;
        for (let q = Math.max(0.2 * p.r, crossing - d); q <= crossing + d; q += dr / 2) {
          const xo = p.x + (q + 0.5 * d) * COS[k]!,
            yo = p.y + (q + 0.5 * d) * SIN[k]!;
          const xi = p.x + (q - 0.5 * d) * COS[k]!,
            yi = p.y + (q - 0.5 * d) * SIN[k]!;
          if (xo < 0 || yo < 0 || xo > w - 1 || yo > h - 1 || xi < 0 || yi < 0 || xi > w - 1 || yi > h - 1) continue;
          const st = sampleBilinear(src, w, h, xo, yo) - sampleBilinear(src, w, h, xi, yi);
          if (st > step) {
            step = st;
            found = q;
          }
        }
        if (!Number.isFinite(step)) {
          found = crossing;
          step = 0;
        }
        // A boundary through a filled-in reflection is made up: the ray does not count.
        for (let q = found - d; q <= found + d; q += 0.5) {
          const x = Math.round(p.x + q * COS[k]!),
            y = Math.round(p.y + q * SIN[k]!);
          if (x >= 0 && y >= 0 && x < w && y < h && filled[y * w + x]) {
            step = NaN;
            break;
          }
        }
        break;
      }
      prev = v;
    }
    rs.push(Number.isFinite(found) ? found : p.r);
    steps.push(Number.isFinite(found) ? step : 0);
  }
  // Rays with a weak step are covered (eyelid, lashes): leave them out; rays through a reflection
  // (NaN) say nothing either way.
  const sorted = steps.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length < RAYS / 6) sorted.length = 0;
  const median = sorted.length ? sorted[sorted.length >> 1]! : 0;
  // How clear the edge is: the ray at the 35th percentile, so it must go all round but for the
  // third an eyelid may cover (a small circle astride the pupil's rim has no such edge).
  const edge = sorted.length ? sorted[Math.floor(0.35 * (sorted.length - 1))]! : 0;
  for (let k = 0; k < RAYS; k++) {
    if (!(steps[k]! >= 0.5 * median)) continue;
    xs.push(p.x + rs[k]! * COS[k]!);
    ys.push(p.y + rs[k]! * SIN[k]!);
  }
  // The boundary as a function of the ray's angle, ρ(θ) = r₀ + c cos θ + d sin θ + a cos 2θ +
  // b sin 2θ: the first harmonic is the centre's offset, the second the ellipse (semi-axes
  // r₀ ± √(a² + b²)). Fitted by least squares and refitted without the rays it does not explain
  // (a pupil merging into dark lashes above it sends a sector of rays astray), three times.
  let aspect = 1;
  let mx = p.x,
    my = p.y,
    meanRadius = p.r;
  let circle: Circle | null = null;
  let fit: number[] | null = null;
  const rays: number[] = [];
  // Rays into the upper quarter are left out: the upper lid's lashes often merge with the pupil
  // there (the lower lid rarely reaches it), and three quarters of the boundary fix an ellipse.
  for (let k = 0; k < RAYS; k++) if (steps[k]! >= 0.5 * median) rays.push(k);
  if (rays.length >= 12) {
    let keep = rays;
    let coef: number[] | null = null;
    for (let iter = 0; iter < 4; iter++) {
      coef = fitHarmonics(
        keep.map((k) => (2 * Math.PI * k) / RAYS),
        keep.map((k) => rs[k]!),
      );
      if (!coef) break;
      const c = coef;
      const res = keep.map((k) => Math.abs(rs[k]! - harmonic(c, (2 * Math.PI * k) / RAYS)));
      const mad = 1.4826 * [...res].sort((x, y) => x - y)[res.length >> 1]!;
      const next = keep.filter((_, i) => res[i]! <= Math.max(0.75, 2.5 * mad));
      if (next.length === keep.length || next.length < 12) break;
      keep = next;
    }
    if (coef && coef[0]! > 0) {
      fit = coef;
      const [r0, c1, d1, a2, b2] = coef as [number, number, number, number, number];
      const amp = Math.min(0.95 * r0, Math.hypot(a2, b2));
      aspect = (r0 - amp) / (r0 + amp);
      mx = p.x + c1;
      my = p.y + d1;
      meanRadius = r0;
      circle = { x: mx, y: my, r: r0 };
    }
    // The aspect from the directions eyelids leave alone: the width between the left and right
    // ends (rays within 20° of horizontal) against the depth from their mid-height down to the
    // lower end (rays within 30° of straight down). The upper lid and its lashes often cover or
    // merge with the top of the pupil, which would make a round pupil look squashed (or
    // stretched); an eye turned away narrows its pupil in width or in depth, top or not.
    const pts = (pred: (k: number) => boolean) => rays.filter(pred).map((k) => ({ x: p.x + rs[k]! * COS[k]!, y: p.y + rs[k]! * SIN[k]! }));
    const left = pts((k) => COS[k]! < -0.94),
      right = pts((k) => COS[k]! > 0.94),
      low = pts((k) => SIN[k]! > 0.87);
    if (left.length >= 2 && right.length >= 2 && low.length >= 2) {
      const avg = (v: Array<{ x: number; y: number }>, f: (q: { x: number; y: number }) => number) =>
        v.reduce((a, q) => a + f(q), 0) / v.length;
      const halfWidth = (avg(right, (q) => q.x) - avg(left, (q) => q.x)) / 2;
      const midY = avg([...left, ...right], (q) => q.y);
      const depth = avg(low, (q) => q.y) - midY;
      if (halfWidth > 0 && depth > 0) aspect = Math.min(halfWidth, depth) / Math.max(halfWidth, depth);
    }
  }
  // Per clean ray, the radial profile from 0.3 r to 1.6 r: the step between inside (0.3–0.6 r)
  // and just outside (1.3–1.6 r), and the edge's equivalent width, the step over the steepest
  // slope (central difference over ±1 px): a step blurred by a Gaussian of σ px is about 2.5 σ
  // wide, whatever the contrast. Per ray, so a boundary that is not quite a circle does not
  // smear the edge; the median over the rays.
  // Each ray's profile is taken relative to its own boundary radius b (0.3–1.6 b), and its width
  // times cos α, α the angle between the ray and the boundary's normal from the fitted ρ(θ): an
  // elliptical pupil's rays cross its edge obliquely, which widens it by 1 / cos α.
  const widths: number[] = [],
    contrasts: number[] = [];
  const k = Math.max(1, Math.round(1 / dr));
  const prof: number[] = [];
  for (let ray = 0; ray < RAYS; ray++) {
    if (!(steps[ray]! >= 0.5 * median)) continue;
    const b = rs[ray]!;
    const r0 = 0.3 * b,
      r1 = 1.6 * b;
    prof.length = 0;
    for (let r = r0; r <= r1 + 1e-9; r += dr) {
      const x = p.x + r * COS[ray]!,
        y = p.y + r * SIN[ray]!;
      prof.push(x < 0 || y < 0 || x > w - 1 || y > h - 1 ? NaN : sampleBilinear(src, w, h, x, y));
    }
    const at = (f: number) => Math.max(0, Math.min(prof.length - 1, Math.round((f * b - r0) / dr)));
    const mean = (a: number, b2: number) => {
      const v = prof.slice(a, b2 + 1).filter(Number.isFinite);
      return v.length ? v.reduce((x, y) => x + y, 0) / v.length : NaN;
    };
    const c = mean(at(1.3), at(1.6)) - mean(at(0.3), at(0.6));
    if (!(c > 0)) continue;
    let slope = 0;
    for (let i = k; i < prof.length - k; i++) {
      const d = (prof[i + k]! - prof[i - k]!) / (2 * k * dr);
      if (d > slope) slope = d;
    }
    if (slope <= 0) continue;
    let obliq = 1;
    if (fit) {
      const t = (2 * Math.PI * ray) / RAYS;
      const rho = harmonic(fit, t);
      const drho = -fit[1]! * Math.sin(t) + fit[2]! * Math.cos(t) - 2 * fit[3]! * Math.sin(2 * t) + 2 * fit[4]! * Math.cos(2 * t);
      if (rho > 0) obliq = 1 / Math.hypot(1, drho / rho);
    }
    widths.push((c / slope) * obliq);
    contrasts.push(c);
  }
  const med = (v: number[]) => (v.length ? [...v].sort((a, b) => a - b)[v.length >> 1]! : NaN);
  const width = widths.length >= 6 ? med(widths) : Infinity;
  const contrast = med(contrasts);
  return { aspect, width, contrast, edge, typicalEdge: median, center: { x: mx, y: my }, meanRadius, circle };
}

export function localizeIris(img: GrayImage, opts: IrisCheckOptions = {}): IrisLocalization {
  const wk = downsample(img);
  const { w, h, q } = wk;
  const { image: src, filled } = fillReflections(wk);

  // Pupil: of the dark-blob candidates with a clear edge (traced ray by ray, so an elliptical
  // pupil has one too), the one darkest inside; of those about as dark, the largest. The iris is a
  // dark round blob too, often with the stronger edge (iris to sclera), but the pupil inside it is
  // darker.
  const cands0 = pupilCandidates(src, w, h);
  const mid = Float32Array.from(src).sort()[src.length >> 1]!;
  // Every candidate is screened by its traced shape; the three most pupil-like are traced until
  // they settle and chosen from again.
  const rMinPupil = Math.max(3, 0.02 * Math.min(w, h));
  type Judged = { circle: Circle; shape: PupilShape; inside: number; spread: number };
  const judge = (circle: Circle, iterations: number): Judged => ({
    circle,
    shape: pupilShape(src, w, h, circle, filled, iterations),
    inside: diskMean(src, w, h, circle.x, circle.y, 0.6 * circle.r),
    spread: diskSpread(src, w, h, circle.x, circle.y, 0.6 * circle.r),
  });
  const choose = (list: Judged[]): Judged[] => {
    // A pupil is evenly dark inside (reflections filled) and returns little light: under 40 % of
    // what surrounds it, or of the image's median level (a dark, low-contrast frame). A tangle of
    // lashes against skin is neither.
    const ok = list.filter(
      (c) =>
        Number.isFinite(c.shape.edge) &&
        Number.isFinite(c.inside) &&
        c.circle.r >= rMinPupil &&
        c.spread <= 0.3 * c.shape.contrast &&
        (c.inside <= 0.4 * (c.inside + c.shape.contrast) || c.inside <= 0.4 * mid),
    );
    // A clear edge goes all round: its 35th-percentile ray steps at least 8 gray levels and 40 %
    // of its typical (median) ray. Strength is not compared between candidates: iris to sclera is
    // often a much stronger step than pupil to iris.
    const clear = ok.filter((c) => c.shape.edge >= 8 && c.shape.edge >= 0.4 * c.shape.typicalEdge);
    // The pupil is the darkest and most even blob: a circle grown past it takes in iris, which is
    // brighter and uneven. Of those within 6 gray levels of the best, the largest (a circle inside
    // the pupil is as dark and even as the pupil).
    const key = (c: Judged) => c.inside + 2 * c.spread;
    const best = Math.min(...clear.map(key));
    // The rest follow darkest and most even first: by size, a dark iris (a large, dark, round blob
    // round a small pupil) would crowd the pupil out of the three that are refined.
    const inBest = (c: Judged) => key(c) <= best + 6;
    return clear.sort((a, b) => (inBest(a) ? 0 : 1) - (inBest(b) ? 0 : 1) || (inBest(a) ? b.circle.r - a.circle.r : 0) || key(a) - key(b));
  };
  const judged0 = cands0.map((c) => judge(c, 0));
  const screened = choose(judged0);
  // The three most pupil-like, traced until their centre settles, judged again on the circle
  // through their boundary.
  const refined = screened.slice(0, 3).map((c) => {
    const shape = pupilShape(src, w, h, c.circle, filled, 3);
    return judge(shape.circle && shape.circle.r > 0.5 * c.circle.r && shape.circle.r < 4 * c.circle.r ? shape.circle : c.circle, 1);
  });
  const chosen = choose(refined)[0];
  // The circle through the traced boundary where there is one.
  const pupil: Circle | null = chosen
    ? chosen.shape.circle && chosen.shape.circle.r > 0.5 * chosen.circle.r && chosen.shape.circle.r < 4 * chosen.circle.r
      ? chosen.shape.circle
      : chosen.circle
    : null;
  const pupilEdge = chosen?.shape.edge ?? 0;
  if (!pupil || pupilEdge < 6) {
    throw unusable(
      'closed',
      'no pupil found: the eye is closed or not in view',
      { pupilEdge },
      'ask the person to open the eye wide and look into the camera',
    );
  }

  // Limbus, on the lateral sectors (20° above to 35° below the horizontal, y down: the upper lid
  // often covers more than 20° above), over centres near the pupil's, iris radius 1.3 to 6.5 pupil
  // radii (pupil/iris ratio 0.15–0.75): the radius with the strongest step between the bands just
  // inside and just outside it (Daugman's operator with a wide blur: a limbus is a soft edge, and
  // iris texture or the collarette step only locally), scored by the weaker side (one side alone
  // may be a crease), where the inside band is still iris.
  const deg = Math.PI / 180;
  const side = Array.from({ length: 12 }, (_, k) => (-20 + (55 * k) / 11) * deg);
  const rc = Float64Array.from(side, Math.cos),
    rs = Float64Array.from(side, Math.sin);
  const lc = Float64Array.from(side, (a) => Math.cos(Math.PI - a)),
    ls = Float64Array.from(side, (a) => Math.sin(Math.PI - a));
  const limbusSrc = maskedAsSclera(wk, src);
  const r0 = Math.max(1.15 * pupil.r, pupil.r + 2);
  const rMin = Math.max(1.3 * pupil.r, pupil.r + 4),
    rMax = Math.min(6.5 * pupil.r, 0.6 * Math.max(w, h));
  const span = Math.max(2, Math.round(pupil.r * 0.25));
  const stepR = Math.max(0.5, pupil.r / 20);
  const n = Math.floor((1.2 * rMax - r0) / stepR) + 1;
  const left = new Float64Array(n),
    right = new Float64Array(n);
  let iris: Circle = { x: pupil.x, y: pupil.y, r: rMin };
  let irisScore = -Infinity;
  const BAND = 0.2;
  const mean = (prof: Float64Array, a: number, b: number): number => {
    let sum = 0,
      cnt = 0;
    for (let t = a; t <= b; t++)
      if (Number.isFinite(prof[t]!)) {
        sum += prof[t]!;
        cnt++;
      }
    return cnt >= (b - a + 1) / 2 ? sum / cnt : NaN;
  };
  /**
   * The step at radius index i on one side: the band just outside (to (1 + BAND) r) over the band
   * just inside (from (1 − BAND) r), and only where the inside band is still iris: closer to the
   * iris's own level (next to the pupil) than to the outside band. Past the limbus the inside band
   * is sclera, and a step there (sclera to skin at the eye's corners) is not the iris's edge.
   */
  const sideStep = (prof: Float64Array, a: number, i: number, j: number, level: number): number => {
    const inside = mean(prof, a, i - 1),
      outside = mean(prof, i, j);
    if (!(outside > inside) || inside - level > 0.5 * (outside - level)) return -Infinity;
    return outside - inside;
  };
  const levelEnd = Math.round((Math.max(r0 + 3, 1.3 * r0) - r0) / stepR);
  // The lateral sectors fix the centre's x well and its y hardly at all: the centre stays within
  // 15 % of the pupil radius of the pupil's centre in y and 25 % in x (the pupil sits within a few
  // per cent of the iris's radius of its centre), on a coarse grid the fine search below refines.
  const spanY = Math.max(1, Math.round(pupil.r * 0.15));
  for (let dy = -spanY; dy <= spanY; dy += Math.max(1, Math.round(spanY / 2)))
    for (let dx = -span; dx <= span; dx += Math.max(1, Math.round(span / 3))) {
      const cx = pupil.x + dx,
        cy = pupil.y + dy;
      for (let t = 0; t < n; t++) {
        left[t] = ringMean(limbusSrc, w, h, cx, cy, r0 + t * stepR, lc, ls);
        right[t] = ringMean(limbusSrc, w, h, cx, cy, r0 + t * stepR, rc, rs);
      }
      const levelL = mean(left, 0, levelEnd),
        levelR = mean(right, 0, levelEnd);
      for (let r = rMin; r <= rMax; r += stepR) {
        const i = Math.round((r - r0) / stepR),
          j = Math.min(n - 1, Math.round((r * (1 + BAND) - r0) / stepR));
        const a = Math.max(0, Math.round((r * (1 - BAND) - r0) / stepR));
        const sc = Math.min(sideStep(left, a, i, j, levelL), sideStep(right, a, i, j, levelR));
        if (sc > irisScore) {
          irisScore = sc;
          iris = { x: cx, y: cy, r };
        }
      }
    }
  // Then precisely: the sharpest step (over ±4 % of the radius) within 12 % of that radius and
  // 6 % of it around that centre, again by the weaker side.
  {
    const coarse = iris;
    const d = Math.max(1.5, 0.04 * coarse.r),
      cs = Math.max(2, Math.round(0.06 * coarse.r));
    let bestFine = -Infinity;
    for (let dy = -cs; dy <= cs; dy += 1)
      for (let dx = -cs; dx <= cs; dx += 1) {
        const cx = coarse.x + dx,
          cy = coarse.y + dy;
        for (let r = 0.88 * coarse.r; r <= 1.12 * coarse.r; r += 0.5) {
          const sl = ringMean(limbusSrc, w, h, cx, cy, r + d, lc, ls) - ringMean(limbusSrc, w, h, cx, cy, r - d, lc, ls);
          const sr = ringMean(limbusSrc, w, h, cx, cy, r + d, rc, rs) - ringMean(limbusSrc, w, h, cx, cy, r - d, rc, rs);
          const sc = Math.min(Number.isFinite(sl) ? sl : -Infinity, Number.isFinite(sr) ? sr : -Infinity);
          if (sc > bestFine) {
            bestFine = sc;
            iris = { x: cx, y: cy, r };
          }
        }
      }
  }

  const shape = chosen!.shape;
  const full = (c: Circle): Circle => ({ x: (c.x + 0.5) * q - 0.5, y: (c.y + 0.5) * q - 0.5, r: c.r * q });
  const fullPupil = full(pupil),
    fullIris = full(iris);
  // The pupil bounds the iris from below (pupil/iris ratio at most 0.75): a limbus found inside
  // that is a wrong one (a blurred eye's soft limbus), and neither size nor focus is judged on it.
  // The edge width counts relative to the iris: the code's Gabor filters see the iris at a scale
  // set by its size.
  const irisR = Math.max(fullIris.r, fullPupil.r / 0.75);
  const edgeWidth = (shape.width * q) / irisR;
  const sharpness = Math.max(0, Math.min(1, 1 - (edgeWidth - 0.04) / 0.08));

  // Blurred: the edge is wide at the working scale (a frame about 240 lines high, where a sharp
  // edge spans 2–3 px whatever the camera) and wide for the iris too (a magnified capture spreads
  // a sharp edge over more pixels). Judged before size: a blurred limbus may be found too small.
  const maxWidth = opts.maxEdgeWidth ?? 0.06;
  if (shape.width > 4.5 && edgeWidth > maxWidth) {
    throw unusable(
      'blurred',
      `the eye image is out of focus (the pupil's edge spreads over ${(100 * edgeWidth).toFixed(0)} % of the iris radius, at most ${(100 * maxWidth).toFixed(0)} %)`,
      { edgeWidth, maxEdgeWidth: maxWidth, workingWidthPx: shape.width, pupil: fullPupil, iris: fullIris },
      'ask the person to hold still at the focus distance and capture again',
    );
  }
  const minR = opts.minIrisRadius ?? 40;
  if (irisR < minR) {
    throw unusable(
      'too-small',
      `the iris is ${Math.round(2 * irisR)} px across, at least ${2 * minR} px are needed`,
      { irisRadius: irisR, minIrisRadius: minR, pupil: fullPupil, iris: fullIris },
      'ask the person to come closer to the camera',
    );
  }
  const minAspect = opts.minAspect ?? 0.75;
  if (shape.aspect < minAspect) {
    throw unusable(
      'off-axis',
      `the pupil is seen as an ellipse (aspect ${shape.aspect.toFixed(2)}): the gaze is off-axis`,
      { aspect: shape.aspect, pupil: fullPupil, iris: fullIris },
      'ask the person to look straight into the camera',
    );
  }
  return { pupil: fullPupil, iris: fullIris, sharpness, aspect: shape.aspect, pupilContrast: shape.contrast };
}

/** The mask value of a cropped-and-masked iris image (kind 7). */
const MASK_VALUE = 128;

/**
 * For a masked capture (at least 15 % of the working pixels inside flat runs of exactly 128), a
 * copy where those flat mask pixels read as sclera (200): the flat mask is hardly brighter than
 * the iris, and the limbus search would not see the iris end. Otherwise `f` itself.
 */
function maskedAsSclera(wk: Work, f: Float32Array): Float32Array {
  const { w, h } = wk;
  const src = wk.f;
  const flat = (i: number): boolean =>
    src[i] === MASK_VALUE &&
    src[i - 1] === MASK_VALUE &&
    src[i + 1] === MASK_VALUE &&
    src[i - w] === MASK_VALUE &&
    src[i + w] === MASK_VALUE;
  let n = 0;
  for (let y = 1; y < h - 1; y++) for (let x = 1; x < w - 1; x++) if (flat(y * w + x)) n++;
  if (n < 0.15 * w * h) return f;
  const out = Float32Array.from(f);
  for (let y = 1; y < h - 1; y++) for (let x = 1; x < w - 1; x++) if (flat(y * w + x)) out[y * w + x] = 200;
  return out;
}
