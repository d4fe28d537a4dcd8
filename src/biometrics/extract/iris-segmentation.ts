/**
 * Iris localization: the pupil (dark blob, refined by the strongest circular edge), the limbus
 * (Daugman's integro-differential operator on the lateral sectors, where eyelids rarely reach),
 * and the capture checks that refuse an unusable eye (closed, off-axis, too small, blurred).
 */
import { AgentError } from '../../core/errors.js';
import { sampleBilinear } from '../image/filters.js';
import type { GrayImage } from '../image/gray-image.js';

export interface Circle { x: number; y: number; r: number }

export interface IrisLocalization {
  pupil: Circle;
  iris: Circle;
  /** Mean intensity step per pixel across the pupil edge (focus measure). */
  sharpness: number;
}

export interface IrisCheckOptions {
  /** Smallest acceptable iris radius in pixels (default 60; ISO/IEC 29794-6 asks ≥ 80 for good quality). */
  minIrisRadius?: number;
  /** Smallest pupil-edge sharpness, gray levels per pixel (default 12). */
  minSharpness?: number;
  /** Smallest pupil aspect ratio (minor/major axis of the dark blob) before the gaze counts as off-axis (default 0.75). */
  minAspect?: number;
}

function unusable(reason: 'closed' | 'off-axis' | 'too-small' | 'blurred', message: string, context: Record<string, unknown>, hint: string): AgentError {
  return new AgentError('BIOMETRICS_UNUSABLE_CAPTURE', message, { reason, ...context }, { hint, retryable: true });
}

export function localizeIris(img: GrayImage, opts: IrisCheckOptions = {}): IrisLocalization {
  const { width: W, height: H, pixels } = img;
  // Half-resolution copy for the pupil search.
  const q = 2, qw = Math.floor(W / q), qh = Math.floor(H / q);
  const small = new Float32Array(qw * qh);
  for (let y = 0; y < qh; y++) for (let x = 0; x < qw; x++) {
    let s = 0;
    for (let dy = 0; dy < q; dy++) for (let dx = 0; dx < q; dx++) s += pixels[(y * q + dy) * W + x * q + dx]!;
    small[y * qw + x] = s / (q * q);
  }
  // Dark pixels, opened (thin lashes vanish), then the largest component.
  const hist = new Int32Array(256);
  for (const v of small) hist[Math.round(v)]!++;
  let acc = 0, p1 = 0;
  for (; p1 < 256; p1++) { acc += hist[p1]!; if (acc > small.length * 0.002) break; }
  const thr = Math.min(75, p1 + 30);
  const dark = new Uint8Array(qw * qh);
  for (let y = 1; y < qh - 1; y++) for (let x = 1; x < qw - 1; x++) {
    let all = 1;
    for (let dy = -1; dy <= 1 && all; dy++) for (let dx = -1; dx <= 1; dx++) if (small[(y + dy) * qw + x + dx]! > thr) { all = 0; break; }
    dark[y * qw + x] = all;
  }
  const label = new Int32Array(qw * qh);
  let best = { n: 0, minX: 0, maxX: 0, minY: 0, maxY: 0, sx: 0, sy: 0 };
  let next = 1;
  for (let i = 0; i < dark.length; i++) {
    if (!dark[i] || label[i]) continue;
    const comp = { n: 0, minX: 1e9, maxX: -1, minY: 1e9, maxY: -1, sx: 0, sy: 0 };
    const stack = [i];
    label[i] = next;
    while (stack.length) {
      const j = stack.pop()!;
      const x = j % qw, y = (j - x) / qw;
      comp.n++; comp.sx += x; comp.sy += y;
      if (x < comp.minX) comp.minX = x; if (x > comp.maxX) comp.maxX = x;
      if (y < comp.minY) comp.minY = y; if (y > comp.maxY) comp.maxY = y;
      for (const k of [j - 1, j + 1, j - qw, j + qw]) if (k >= 0 && k < dark.length && dark[k] && !label[k]) { label[k] = next; stack.push(k); }
    }
    next++;
    if (comp.n > best.n) best = comp;
  }
  if (best.n < 8) {
    throw unusable('closed', 'no pupil found: the eye looks closed', { darkArea: best.n }, 'ask the person to open the eye wide and look into the camera');
  }
  const bw = best.maxX - best.minX + 1, bh = best.maxY - best.minY + 1;
  let pupil: Circle = { x: ((best.minX + best.maxX) / 2 + 0.5) * q, y: ((best.minY + best.maxY) / 2 + 0.5) * q, r: ((bw + bh) / 4 + 0.5) * q };
  // Refine: the circle with the strongest mean outward step.
  const f = toF(img);
  const edge = (cx: number, cy: number, r: number, angles: number[], w = 1.5, src = f): number => {
    let s = 0;
    for (const a of angles) {
      const c = Math.cos(a), si = Math.sin(a);
      s += sampleBilinear(src, W, H, cx + (r + w) * c, cy + (r + w) * si) - sampleBilinear(src, W, H, cx + (r - w) * c, cy + (r - w) * si);
    }
    return s / (2 * w * angles.length);
  };
  const all32 = Array.from({ length: 32 }, (_, k) => (2 * Math.PI * k) / 32);
  let bestScore = -Infinity;
  let cand = pupil;
  const consider = (c: Circle) => { const sc = edge(c.x, c.y, c.r, all32); if (sc > bestScore) { bestScore = sc; cand = c; } };
  for (let dy = -4; dy <= 4; dy += 2) for (let dx = -4; dx <= 4; dx += 2) for (let dr = -5; dr <= 5; dr++) if (pupil.r + dr >= 3) consider({ x: pupil.x + dx, y: pupil.y + dy, r: pupil.r + dr });
  const coarse = cand;
  for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) for (let dr = -1; dr <= 1; dr += 0.5) consider({ x: coarse.x + dx, y: coarse.y + dy, r: coarse.r + dr });
  pupil = cand;
  const sharpness = bestScore;

  // Capture checks on the pupil, in this order:
  // - too small: the pupil's major semi-axis (the bounding box of the dark blob; an off-axis gaze
  //   narrows only the other axis) under 20 px, where the smallest normal pupil at the working
  //   distance is about 28 px. Judged first: a tiny blob's shape says nothing.
  // - off-axis: the blob's bounding-box aspect under 0.75, or, as a second opinion when a
  //   reflection, lashes or dark iris texture touching the pupil widen the box, under 0.85 with
  //   the pupil's own edge (left + right against up + down steps) under 0.6.
  const scale = Math.min(W / 640, H / 480);
  const major = ((Math.max(bw, bh) + 1) / 2) * q;
  const minPupil = 20 * scale;
  if (major < minPupil) {
    throw unusable('too-small', `the pupil is ${Math.round(2 * major)} px across, the eye is too far from the camera`, { pupilRadius: major, minPupilRadius: minPupil }, 'ask the person to come closer to the camera');
  }
  // Saturated reflections (inside or next to the pupil) count as pupil, so they give no step;
  // other gray levels are clipped at 140 so only the dark-to-iris step counts.
  const clipped = (x: number, y: number): number => {
    const v = sampleBilinear(f, W, H, x, y);
    return v > 200 ? 0 : Math.min(140, v);
  };
  const edgeRadius = (mid: number): number => {
    let bestR = pupil.r, bestS = -Infinity;
    for (let r = Math.max(2, pupil.r * 0.35); r <= pupil.r * 3; r += 0.5) {
      let sc = 0;
      for (let k = -2; k <= 2; k++) {
        const a = mid + (k * 8 * Math.PI) / 180, c = Math.cos(a), si = Math.sin(a);
        sc += clipped(pupil.x + (r + 2) * c, pupil.y + (r + 2) * si) - clipped(pupil.x + (r - 2) * c, pupil.y + (r - 2) * si);
      }
      if (sc > bestS) { bestS = sc; bestR = r; }
    }
    return bestR;
  };
  const boxAspect = Math.min(bw, bh) / Math.max(bw, bh);
  const width = edgeRadius(0) + edgeRadius(Math.PI), height = edgeRadius(Math.PI / 2) + edgeRadius(-Math.PI / 2);
  const edgeAspect = Math.min(width, height) / Math.max(width, height);
  const minAspect = opts.minAspect ?? 0.75;
  if (boxAspect < minAspect || (boxAspect < 0.85 && edgeAspect < 0.6)) {
    const aspect = boxAspect < minAspect ? boxAspect : edgeAspect;
    throw unusable('off-axis', `the pupil is seen as an ellipse (aspect ${aspect.toFixed(2)}): the gaze is off-axis`, { aspect, boxAspect, edgeAspect }, 'ask the person to look straight into the camera');
  }

  // Limbus: strongest outward step on the lateral sectors, over centres near the pupil's.
  // Sectors from 20° above to 35° below the horizontal on both sides (y down): the upper lid
  // often covers more than 20° above.
  const deg = Math.PI / 180;
  // A cropped-and-masked capture (ISO/IEC 19794-6 kind 7) has everything outside the iris set to
  // gray 128, which is hardly brighter than the iris: the limbus search sees that flat mask as
  // sclera-bright instead.
  const limbusSrc = maskedAsSclera(img, f);
  const lateral = [...Array.from({ length: 12 }, (_, k) => (-20 + (55 * k) / 11) * deg), ...Array.from({ length: 12 }, (_, k) => Math.PI - (-20 + (55 * k) / 11) * deg)];
  const rMin = Math.max(pupil.r * 1.4, pupil.r + 6), rMax = Math.min(pupil.r * 4.5, Math.max(W, H) / 2);
  let iris: Circle = { x: pupil.x, y: pupil.y, r: rMin };
  let irisScore = -Infinity;
  const stepR = Math.max(1, pupil.r / 20);
  const span = Math.max(2, Math.round(pupil.r * 0.15));
  for (let dy = -span; dy <= span; dy += Math.max(1, Math.round(span / 3))) for (let dx = -span; dx <= span; dx += Math.max(1, Math.round(span / 3))) {
    for (let r = rMin; r <= rMax; r += stepR) {
      const s = edge(pupil.x + dx, pupil.y + dy, r, lateral, 3, limbusSrc);
      if (s > irisScore) { irisScore = s; iris = { x: pupil.x + dx, y: pupil.y + dy, r }; }
    }
  }
  const minR = opts.minIrisRadius ?? 60;
  if (iris.r < minR) {
    throw unusable('too-small', `the iris is ${Math.round(2 * iris.r)} px across, at least ${2 * minR} px are needed`, { irisRadius: iris.r, minIrisRadius: minR }, 'ask the person to come closer to the camera');
  }
  // The edge step is per pixel: a magnified capture (a cropped kind upscaled, iris radius about
  // 200 px) spreads the same sharp edge over more pixels, so the step is taken per 110 px of iris
  // radius (a VGA capture at the working distance) when the iris is larger than that.
  const focus = sharpness * Math.max(1, iris.r / 110);
  const minSharp = opts.minSharpness ?? 12;
  if (focus < minSharp) {
    throw unusable('blurred', `the eye image is out of focus (edge step ${focus.toFixed(1)} gray levels per pixel at the working scale, ${minSharp} needed)`, { sharpness: focus, minSharpness: minSharp }, 'ask the person to hold still at the focus distance and capture again');
  }
  return { pupil, iris, sharpness };
}

/** The mask value of a cropped-and-masked iris image (kind 7). */
const MASK_VALUE = 128;

/**
 * For a masked capture (at least 15 % of the pixels inside flat runs of exactly 128), a copy of
 * `f` where those flat mask pixels read as sclera (200); otherwise `f` itself.
 */
function maskedAsSclera(img: GrayImage, f: Float32Array): Float32Array {
  const { width: W, height: H, pixels } = img;
  const flat = (i: number): boolean => pixels[i] === MASK_VALUE && pixels[i - 1] === MASK_VALUE && pixels[i + 1] === MASK_VALUE && pixels[i - W] === MASK_VALUE && pixels[i + W] === MASK_VALUE;
  let n = 0;
  for (let y = 1; y < H - 1; y++) for (let x = 1; x < W - 1; x++) if (pixels[y * W + x] === MASK_VALUE && flat(y * W + x)) n++;
  if (n < 0.15 * W * H) return f;
  const out = Float32Array.from(f);
  for (let y = 1; y < H - 1; y++) for (let x = 1; x < W - 1; x++) if (flat(y * W + x)) out[y * W + x] = 200;
  return out;
}

const floatCache = new WeakMap<GrayImage, Float32Array>();
function toF(img: GrayImage): Float32Array {
  let f = floatCache.get(img);
  if (!f) { f = Float32Array.from(img.pixels); floatCache.set(img, f); }
  return f;
}
