/**
 * Specular reflections of the camera's illuminators, found and filled in before anything looks
 * for the pupil: a reflection is a small spot far brighter than what surrounds it, wherever it
 * falls (inside the pupil, on the iris, on the eyelid), whatever its number or arrangement (one
 * dot, two, a ring of eight round the pupil's centre).
 *
 * Found with a morphological top-hat (the image minus its opening by a square a little larger than
 * a reflection: what is left is every bright detail narrower than the square) above a fraction of
 * the image's own gray-level range, grown by a halo, and filled from the border inwards with the
 * mean of the known neighbours: a reflection inside the pupil then reads as pupil. Every size is a
 * fraction of the image's short side, every level a fraction of its range: no camera is special.
 *
 * Tested in test/unit/biometrics/extract/iris-segmentation.test.ts and
 * test/unit/biometrics/extract/iris-small-camera.test.ts (reflections in and round the pupil,
 * through the localization).
 */
import { boxBlur } from '../image/filters.js';

/**
 * The p-quantiles (0..1) of float gray levels in 0..255: one 256-bin histogram, made once, read
 * for every p asked.
 */
export function grayQuantiles(f: Float32Array): (p: number) => number {
  const hist = new Int32Array(256);
  for (let i = 0; i < f.length; i++) {
    // Math.round clamped to 0..255 (x + 0.5 truncated is the same once clamped).
    const v = f[i]! + 0.5;
    hist[v <= 0 ? 0 : v >= 255 ? 255 : v | 0]!++;
  }
  return (p) => {
    const target = p * f.length;
    let acc = 0;
    for (let v = 0; v < 256; v++) {
      acc += hist[v]!;
      if (acc >= target) return v;
    }
    return 255;
  };
}

export interface Reflections {
  /** The image with every reflection filled in from its surroundings. */
  image: Float32Array;
  /** 1 where a reflection (with its halo) was filled. */
  mask: Uint8Array;
  /** Number of reflections found. */
  count: number;
}

/** The widest reflection filled by default, as a fraction of the image's short side. */
export const REFLECTION_MAX_SIZE = 0.05;

export interface ReflectionOptions {
  /** Widest reflection as a fraction of the image's short side (default REFLECTION_MAX_SIZE: a square of 0.05 + 1 px). */
  maxSize?: number;
  /** How much brighter than its surroundings a reflection is, as a fraction of the image's 1–99 % gray range (default 0.25). */
  minContrast?: number;
}

const EIGHT = [
  [1, 0],
  [1, 1],
  [0, 1],
  [-1, 1],
  [-1, 0],
  [-1, -1],
  [0, -1],
  [1, -1],
] as const;
const RING = 16;
const RING_COS = Float64Array.from({ length: RING }, (_, k) => Math.cos((2 * Math.PI * k) / RING));
const RING_SIN = Float64Array.from({ length: RING }, (_, k) => Math.sin((2 * Math.PI * k) / RING));

/**
 * The pixels that stand out of the image's local mean over a square of side 2r+1 by `minStep` and
 * are brighter, by as much, than three quarters of a ring just outside that square: a reflection
 * is surrounded by darker on all sides, while the skin between two lashes, narrow and bright too,
 * runs on into bright skin. Only pixels at `minLevel` or above, and where `where` allows (all
 * pixels without it).
 */
function brightSpots(f: Float32Array, w: number, h: number, r: number, minStep: number, minLevel: number, where?: Uint8Array): Uint8Array {
  const mean = boxBlur(f, w, h, r);
  const spot = new Uint8Array(w * h);
  const ring = new Float64Array(RING);
  const d = r + 1.5;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const v = f[i]!;
      if (v < minLevel || v - mean[i]! <= minStep || (where && !where[i])) continue;
      let n = 0;
      for (let k = 0; k < RING; k++) {
        const xx = Math.round(x + d * RING_COS[k]!),
          yy = Math.round(y + d * RING_SIN[k]!);
        if (xx >= 0 && yy >= 0 && xx < w && yy < h) ring[n++] = f[yy * w + xx]!;
      }
      if (n < RING / 2) continue;
      const sorted = ring.subarray(0, n).sort();
      if (v - sorted[Math.floor(0.75 * (n - 1))]! > minStep) spot[i] = 1;
    }
  return spot;
}

/**
 * Each spot (8-connected) grown by its glare, downhill: a neighbour joins while it is no brighter
 * than the pixel it is reached from (glare fades away from its reflection), stands out of what the
 * reflection lies on (the median of a ring just outside its reach) by 15 % of the gray range, and
 * lies within the spot's radius plus `glare` of its centre. The growth stops where the image rises
 * again (the iris beyond a dark pupil). Adds to `mask`; returns the number of spots.
 */
function growSpots(f: Float32Array, w: number, h: number, spot: Uint8Array, mask: Uint8Array, glare: number, range: number): number {
  const label = new Int32Array(w * h);
  const ring = new Float64Array(RING);
  const members: number[] = [];
  const stack: number[] = [];
  let count = 0;
  for (let i = 0; i < spot.length; i++) {
    if (!spot[i] || label[i]) continue;
    count++;
    let sx = 0,
      sy = 0;
    members.length = 0;
    stack.push(i);
    label[i] = count;
    while (stack.length) {
      const j = stack.pop()!;
      const x = j % w,
        y = (j - x) / w;
      members.push(j);
      sx += x;
      sy += y;
      mask[j] = 1;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx,
            yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const k = yy * w + xx;
          if (spot[k] && !label[k]) {
            label[k] = count;
            stack.push(k);
          }
        }
    }
    const n = members.length;
    const cx = sx / n,
      cy = sy / n;
    const reach = Math.sqrt(n / Math.PI) + glare;
    let m = 0;
    for (let k = 0; k < RING; k++) {
      const xx = Math.round(cx + (reach + 1) * RING_COS[k]!),
        yy = Math.round(cy + (reach + 1) * RING_SIN[k]!);
      if (xx >= 0 && yy >= 0 && xx < w && yy < h) ring[m++] = f[yy * w + xx]!;
    }
    const floor = (m ? ring.subarray(0, m).sort()[Math.floor(0.5 * (m - 1))]! : 0) + 0.15 * range,
      tol = 0.03 * range;
    stack.push(...members);
    while (stack.length) {
      const j = stack.pop()!;
      const x = j % w,
        y = (j - x) / w;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx,
            yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const k = yy * w + xx;
          if (mask[k] || f[k]! <= floor || f[k]! > f[j]! + tol || (xx - cx) ** 2 + (yy - cy) ** 2 > reach * reach) continue;
          mask[k] = 1;
          stack.push(k);
        }
    }
  }
  return count;
}

/** `mask` grown by one pixel (4-neighbours), in place. */
function dilate1(mask: Uint8Array, w: number, h: number): void {
  const src = mask.slice();
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (!src[y * w + x]) continue;
      if (x > 0) mask[y * w + x - 1] = 1;
      if (x < w - 1) mask[y * w + x + 1] = 1;
      if (y > 0) mask[(y - 1) * w + x] = 1;
      if (y < h - 1) mask[(y + 1) * w + x] = 1;
    }
}

/**
 * The pixels outside `mask` that see a masked pixel within `reach` steps in at least `dirs` of the
 * 8 compass directions (a step leaving the image ends that direction). Per direction, one pass in
 * the order that visits a pixel's neighbour in that direction first, carrying the distance to the
 * nearest masked pixel along it: O(8 n) whatever the reach. Only over the masked pixels' bounding
 * box grown by `reach` (clipped to the image): a pixel beyond it is more than `reach` steps from
 * every masked pixel in every direction, and a step out of it ends a direction as leaving the image
 * does (whatever lies beyond is more than `reach` steps away too), so nothing else changes.
 */
function surrounded(mask: Uint8Array, w: number, h: number, reach: number, dirs: number): Uint8Array {
  const out = new Uint8Array(w * h);
  let mx0 = w,
    my0 = h,
    mx1 = -1,
    my1 = -1;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (mask[y * w + x]) {
        if (x < mx0) mx0 = x;
        if (x > mx1) mx1 = x;
        if (y < my0) my0 = y;
        my1 = y;
      }
  if (mx1 < 0) return out;
  const bx = Math.max(0, mx0 - reach),
    by = Math.max(0, my0 - reach);
  const bw = Math.min(w - 1, mx1 + reach) - bx + 1,
    bh = Math.min(h - 1, my1 + reach) - by + 1;
  const count = new Uint8Array(bw * bh);
  const dist = new Uint16Array(bw * bh);
  const far = 0xffff;
  for (const [dx, dy] of EIGHT) {
    // Rows from the side the direction points to, so that (x + dx, y + dy) is done before (x, y).
    const y0 = dy > 0 ? bh - 1 : 0,
      y1 = dy > 0 ? -1 : bh,
      sy = dy > 0 ? -1 : 1;
    const x0 = dx > 0 ? bw - 1 : 0,
      x1 = dx > 0 ? -1 : bw,
      sx = dx > 0 ? -1 : 1;
    for (let y = y0; y !== y1; y += sy) {
      const yy = y + dy;
      const row = (by + y) * w + bx;
      for (let x = x0; x !== x1; x += sx) {
        const i = y * bw + x;
        const xx = x + dx;
        let d = far;
        if (xx >= 0 && yy >= 0 && xx < bw && yy < bh) {
          const j = yy * bw + xx;
          d = mask[(by + yy) * w + bx + xx] ? 1 : dist[j]! === far ? far : dist[j]! + 1;
        }
        dist[i] = d;
        if (d <= reach && !mask[row + x]) count[i]!++;
      }
    }
  }
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) if (count[y * bw + x]! >= dirs) out[(by + y) * w + bx + x] = 1;
  return out;
}

/**
 * Finds and fills the specular reflections of a float gray image (0..255): bright spots (see
 * `brightSpots`) grown by their glare (`growSpots`), a pixel's margin, and filled from the border
 * inwards (`inpaint`). Then once more on the filled image, where the first reflections surround
 * a pixel, with half the contrast: the haze between reflections packed close together (a ring of
 * eight round the pupil's centre) stands out only once they are gone.
 */
export function fillReflections(f: Float32Array, w: number, h: number, opts: ReflectionOptions = {}): Reflections {
  const short = Math.min(w, h);
  const r = Math.max(2, Math.round(((opts.maxSize ?? REFLECTION_MAX_SIZE) * short) / 2));
  const quantile = grayQuantiles(f);
  const range = Math.max(1, quantile(0.99) - quantile(0.01));
  const minStep = (opts.minContrast ?? 0.25) * range;
  const glare = Math.max(2, 0.02 * short);
  const mask = new Uint8Array(w * h);
  // A specular reflection is among the brightest 5 % of the image (high-contrast iris texture or
  // skin between lashes is not).
  const count = growSpots(f, w, h, brightSpots(f, w, h, r, minStep, quantile(0.95)), mask, glare, range);
  if (!count) return { image: Float32Array.from(f), mask, count };
  dilate1(mask, w, h);
  const first = inpaint(f, mask, w, h);
  // Where the first mask surrounds a pixel (in at least 5 of 8 directions within the glare
  // distance: the haze between reflections), what still stands out.
  const near = surrounded(mask, w, h, Math.ceil(glare), 5);
  const again = brightSpots(first, w, h, r, 0.5 * minStep, 0, near);
  let more = false;
  for (let i = 0; i < again.length; i++)
    if (again[i] && !mask[i]) {
      more = true;
      break;
    }
  if (!more) return { image: first, mask, count };
  growSpots(first, w, h, again, mask, glare, range);
  dilate1(mask, w, h);
  return { image: inpaint(f, mask, w, h), mask, count };
}

/**
 * Fills the masked pixels from the border inwards, each with the mean of the darker half of its
 * known 8-neighbours: the glare round a reflection is brighter than what it covers, never darker,
 * so the darker neighbours are the ones to trust (a reflection in the pupil fills as pupil).
 */
export function inpaint(f: Float32Array, mask: Uint8Array, w: number, h: number): Float32Array {
  const out = Float32Array.from(f);
  const hole = mask.slice();
  let frontier: number[] = [];
  for (let i = 0; i < hole.length; i++) if (hole[i]) frontier.push(i);
  const known = new Float64Array(8);
  for (let pass = 0; frontier.length && pass < 4 * Math.max(w, h); pass++) {
    const done: number[] = [];
    const rest: number[] = [];
    for (const i of frontier) {
      const x = i % w,
        y = (i - x) / w;
      let n = 0;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx,
            yy = y + dy;
          if ((dx || dy) && xx >= 0 && yy >= 0 && xx < w && yy < h && !hole[yy * w + xx]) known[n++] = out[yy * w + xx]!;
        }
      if (n >= 2) {
        const v = known.subarray(0, n).sort();
        const half = Math.ceil(n / 2);
        let sum = 0;
        for (let k = 0; k < half; k++) sum += v[k]!;
        out[i] = sum / half;
        done.push(i);
      } else rest.push(i);
    }
    if (!done.length) break;
    for (const i of done) hole[i] = 0;
    frontier = rest;
  }
  return out;
}
