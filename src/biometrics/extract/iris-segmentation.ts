/**
 * Iris localization for any camera, and the capture checks that refuse an unusable eye.
 *
 * On a working copy about 240 px on its short side (every size below is relative to it, every
 * gray level to the image's own range):
 *
 * 1. specular reflections found and filled (iris-reflections.ts);
 * 2. the pupil: a circular Hough transform on gradient direction over every radius the image
 *    allows, each candidate traced ray by ray to its own boundary and judged on what a pupil is,
 *    the darkest, evenest round blob with an edge all round (iris-pupil.ts);
 * 3. the limbus, constrained by the pupil (iris-limbus.ts).
 *
 * Refusals, each on a measured reason that holds on every camera:
 * - closed: no dark round blob with an edge all round (the eye is shut or not in view);
 * - blurred: the iris texture's focus (iris-focus.ts: a band-pass response at 2 % of the iris
 *   radius, the sensor noise's share taken out, over the iris's own contrast) is under
 *   `minFocus`; only where it cannot be measured (an iris too small, too little of it in view),
 *   the pupil's edge is wide (its equivalent width, step over steepest slope, over 4.5 px at the
 *   working scale and over `maxEdgeWidth` of the iris radius); judged before size and shape,
 *   which blur makes uncertain; and an eye too blurred to be found at all, about to be refused
 *   as closed or off-axis, whose whole frame's focus (frameFocus in iris-focus.ts: its strongest
 *   band-pass responses at 1 % of its short side over its own gray range) is under
 *   `minFrameFocus` (read only on that path);
 * - too-small: the iris found is under `minIrisRadius` px: too few pixels to sample the code's
 *   128 angular positions (the eye is too far from the camera);
 * - off-axis: the pupil, sharp, is an ellipse (minor over major axis under `minAspect`).
 * Too little iris visible after masking (`occluded`) is judged by the pipeline on the code's mask.
 */
import { AgentError } from '../../core/errors.js';
import { gaussianBlur, gaussianBoxRadius, sampleInside, sobel, type Sobel } from '../image/filters.js';
import type { GrayImage } from '../image/gray-image.js';
import { limbusDistance, type Circle } from './iris-geometry.js';
import { frameFocus, irisFocus } from './iris-focus.js';
import { findLimbus, limbusEdges, type Limbus } from './iris-limbus.js';
import { darkBlobs, houghDarkCircles, houghSigma, tracePupil, type Plane, type PupilTrace } from './iris-pupil.js';
import { fillReflections, grayQuantiles, inpaint, REFLECTION_MAX_SIZE } from './iris-reflections.js';

export type { Circle };

export interface IrisLocalization {
  pupil: Circle;
  iris: Circle;
  /** Pupil edge sharpness 0..1 (1: the edge spreads over at most 4 % of the iris radius, 0: 12 % or more). */
  sharpness: number;
  /**
   * Focus of the iris texture (iris-focus.ts): its fine band (relative to the iris radius, the
   * sensor noise's share taken out) over its own contrast; NaN when too little iris is in view to
   * measure it.
   */
  focus: number;
  /** Pupil aspect ratio (minor / major axis of its boundary), 1 = round. */
  aspect: number;
  /** Mean gray step from pupil to iris. */
  pupilContrast: number;
  /** Spread of the gray level inside the pupil over the pupil's contrast (0 = even). */
  pupilEvenness: number;
  /** Share of the pupil's rays its outline explains, and their RMS distance from it over its radius. */
  pupilFitted: number;
  pupilFitError: number;
  /** Median and robust spread (1.4826 × MAD) of the iris's gray level (annulus, upper quarter left out). */
  irisLevel: number;
  irisSpread: number;
  /** Mean gray step from iris to sclera (the weaker lateral side). */
  limbusContrast: number;
  /** Share of the directions round the limbus with an edge facing out. */
  limbusSupport: number;
  /** Specular reflections found (filled in before the search, masked out of the code). */
  reflections: { count: number; mask: Uint8Array; width: number; height: number; scale: number };
  /** The image's 1–99 % gray-level range. */
  grayRange: number;
}

export interface IrisCheckOptions {
  /** Smallest acceptable iris radius in pixels (default 24: 128 angular positions round the limbus need about 150 px of circumference). */
  minIrisRadius?: number;
  /** Widest acceptable pupil edge as a fraction of the iris radius (default 0.06: 7 px on an iris 220 px across), when it also spans over 4.5 px at the working scale; read only where the iris's focus cannot be measured. */
  maxEdgeWidth?: number;
  /** Smallest focus of the iris texture (default MIN_FOCUS, see iris-focus.ts); under it the capture is refused as blurred. */
  minFocus?: number;
  /** Smallest pupil aspect ratio (minor/major axis of its boundary) before the gaze counts as off-axis (default 0.75). */
  minAspect?: number;
  /**
   * Smallest focus of the whole frame (default MIN_FRAME_FOCUS, see frameFocus in iris-focus.ts),
   * read only on an eye about to be refused as closed or off-axis: under it, that eye is refused
   * as blurred instead.
   */
  minFrameFocus?: number;
}

function unusable(
  reason: 'closed' | 'off-axis' | 'too-small' | 'blurred',
  message: string,
  context: Record<string, unknown>,
  hint: string,
): AgentError {
  return new AgentError('BIOMETRICS_UNUSABLE_CAPTURE', message, { reason, ...context }, { hint, retryable: true });
}

const BLUR_HINT = 'ask the person to hold still at the focus distance and capture again';

/**
 * "0.043, it needs at least 0.044": a figure under its floor, both to 3 decimals, the figure
 * rounded down so that one just under the floor never reads as equal to it (0.0439 is 0.043).
 */
export function shortOf(value: number, floor: number): string {
  return `${(Math.floor(value * 1000 + 1e-9) / 1000).toFixed(3)}, it needs at least ${floor.toFixed(3)}`;
}

function blurred(message: string, context: Record<string, unknown>): AgentError {
  return unusable('blurred', `the eye image is out of focus (${message})`, context, BLUR_HINT);
}

function offAxis(aspect: number, minAspect: number, pupil: Circle, iris?: Circle): AgentError {
  return unusable(
    'off-axis',
    `the pupil is seen as an ellipse (aspect ${aspect.toFixed(2)}, at least ${minAspect.toFixed(2)}): the gaze is off-axis`,
    { aspect, minAspect, pupil, ...(iris ? { iris } : {}) },
    'ask the person to look straight into the camera',
  );
}

/** A working copy of an image: float pixels and its scale to the original. */
interface Work extends Plane {
  q: number;
}

function downsample(img: GrayImage): Work {
  const { width: W, height: H, pixels } = img;
  // About 240 px on the short side: a 640×480 frame is halved, a 320×240 one kept.
  const q = Math.max(1, Math.round(Math.min(W, H) / 240));
  const w = Math.floor(W / q),
    h = Math.floor(H / q);
  // (Sums of whole gray levels: exact in any order, so the common scales 1 and 2 are written out.)
  if (q === 1) return { f: new Float32Array(pixels), w, h, q };
  const f = new Float32Array(w * h);
  if (q === 2) {
    for (let y = 0; y < h; y++) {
      const top = 2 * y * W,
        bottom = top + W;
      for (let x = 0; x < w; x++)
        f[y * w + x] = (pixels[top + 2 * x]! + pixels[top + 2 * x + 1]! + pixels[bottom + 2 * x]! + pixels[bottom + 2 * x + 1]!) / 4;
    }
    return { f, w, h, q };
  }
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let dy = 0; dy < q; dy++) for (let dx = 0; dx < q; dx++) s += pixels[(y * q + dy) * W + x * q + dx]!;
      f[y * w + x] = s / (q * q);
    }
  return { f, w, h, q };
}

interface Judged {
  trace: PupilTrace;
  key: number;
}

/**
 * The candidates without the specks: a speck inside a larger dark blob that is nearly as dark is
 * the pupil's own unevenness (the haze round a filled reflection), not a pupil: under a fifth of
 * its radius (a pupil is at least a tenth of its iris, and that blob would be the iris: far
 * brighter than its pupil). Only a blob whose outline explains at least SPECK_HOST_FITTED of its
 * rays counts: one with no such outline is no pupil (an eye's whole opening, darker than the skin
 * round it under lashes and lid shadow, traced to the lids on some rays and to the iris on
 * others), and the pupil inside it is no speck.
 */
export function withoutSpecks<T extends { trace: PupilTrace }>(list: T[]): T[] {
  return list.filter(
    ({ trace: a }) =>
      !list.some(
        ({ trace: b }) =>
          b !== a &&
          b.fitted >= SPECK_HOST_FITTED &&
          a.circle.r < 0.2 * b.circle.r &&
          (a.circle.x - b.circle.x) ** 2 + (a.circle.y - b.circle.y) ** 2 < b.circle.r ** 2 &&
          b.inside - a.inside <= 0.5 * (b.outside - b.inside),
      ),
  );
}

/**
 * The pupil candidates, most pupil-like first: each Hough and dark-blob candidate traced to its
 * boundary (the best six distinct ones again until they settle), kept when it is dark (its inside
 * within the darkest quarter of the gray range), has an edge all round (its 25th-percentile ray
 * steps at least half as much as its median one), stays in the image and is even inside; of those, the darkest,
 * evenest and most clearly bounded (inside level + spread − half the all-round step), and of the
 * ones about as good, the largest (a circle inside the pupil is as dark and even as the pupil);
 * those whose boundary no ray found (specks a few pixels across) after all the others. `grad`:
 * the Hough transform's gradients (houghDarkCircles), when the caller has them.
 */
export function pupilCandidates(p: Plane, range: number, black: number, grad?: Sobel): PupilTrace[] {
  const short = Math.min(p.w, p.h);
  const rMin = Math.max(2.5, 0.012 * short);
  const judge = (t: PupilTrace): Judged | null =>
    t.circle.r >= rMin &&
    t.inside - black <= 0.25 * range &&
    t.inImage >= 0.75 &&
    t.contrast >= 0.06 * range &&
    t.edgeAllRound >= 0.5 * t.contrast &&
    t.spread <= 0.35 * t.contrast
      ? { trace: t, key: t.inside + t.spread - 0.5 * t.edgeAllRound }
      : null;
  // Every candidate traced once; the best six traced again until they settle.
  const first: Judged[] = [];
  for (const c of [...houghDarkCircles(p, rMin, 0.4 * short, 24, grad), ...darkBlobs(p, rMin, 0.3 * short, range)]) {
    const j = judge(tracePupil(p, c));
    if (j) first.push(j);
  }
  first.sort((a, b) => a.key - b.key);
  // Distinct blobs only: many candidates trace to the same one.
  const distinct: Judged[] = [];
  for (const j of first) {
    const c = j.trace.circle;
    if (
      distinct.some(
        (d) =>
          Math.abs(d.trace.circle.r - c.r) < 0.2 * c.r && (d.trace.circle.x - c.x) ** 2 + (d.trace.circle.y - c.y) ** 2 < (0.3 * c.r) ** 2,
      )
    )
      continue;
    distinct.push(j);
  }
  // A blob whose boundary could not be traced on any ray (a speck a few pixels across, such as the
  // dark rim of a reflection inside a dim pupil) has no outline to judge: those with one go first,
  // so that several specks cannot crowd the pupil out of the six looked at again.
  const outlined = (list: Judged[]): Judged[] => [...list.filter((j) => j.trace.fitted > 0), ...list.filter((j) => !(j.trace.fitted > 0))];
  const judged: Judged[] = [];
  for (const j0 of outlined(distinct).slice(0, 6)) {
    // Traced again until it settles; a trace that drifts off a pupil whose edge is broken by
    // reflections and comes out failing the judge falls back to the first trace, which passed.
    let t = j0.trace;
    for (let i = 0; i < 3; i++) {
      const next = tracePupil(p, t.circle);
      const moved = Math.abs(next.circle.x - t.circle.x) + Math.abs(next.circle.y - t.circle.y) + Math.abs(next.circle.r - t.circle.r);
      t = next;
      if (moved < 0.5) break;
    }
    judged.push(judge(t) ?? j0);
  }
  const whole = withoutSpecks(judged);
  judged.length = 0;
  judged.push(...whole);
  if (!judged.length) return [];
  const best = Math.min(...judged.map((j) => j.key));
  const near = judged.filter((j) => j.key <= best + 0.03 * range);
  near.sort((a, b) => b.trace.circle.r - a.trace.circle.r);
  const rest = judged.filter((j) => j.key > best + 0.03 * range).sort((a, b) => a.key - b.key);
  // Once settled, several candidates may be the same blob: each once.
  const out: PupilTrace[] = [];
  for (const j of outlined([...near, ...rest])) {
    const c = j.trace.circle;
    if (out.some((t) => Math.abs(t.circle.r - c.r) < 0.2 * c.r && (t.circle.x - c.x) ** 2 + (t.circle.y - c.y) ** 2 < (0.3 * c.r) ** 2))
      continue;
    out.push(j.trace);
  }
  return out;
}

export function localizeIris(img: GrayImage, opts: IrisCheckOptions = {}): IrisLocalization {
  try {
    return localizeEye(img, opts);
  } catch (err) {
    throw blurredFrame(err, img, opts) ?? err;
  }
}

/**
 * An eye about to be refused as closed or off-axis whose whole frame is out of focus (frameFocus
 * under `minFrameFocus`): refused as blurred instead, with the frame's figure. Blur spreads the
 * pupil's rim and fades the reflections before it takes the iris texture, so an eye too blurred to
 * be found came out as shut, not in view or looking away, and the person was told to open the eye
 * or look at the camera. Read only on that path: an eye that is found costs nothing more.
 */
function blurredFrame(err: unknown, img: GrayImage, opts: IrisCheckOptions): AgentError | null {
  if (!eyeNotFound(err)) return null;
  const { reason, ...context } = err.context as { reason?: string };
  const focus = frameFocus(downsample(img));
  const minFrameFocus = opts.minFrameFocus ?? MIN_FRAME_FOCUS;
  if (!(focus < minFrameFocus)) return null;
  return blurred(`no eye can be found in it: the frame's focus is ${shortOf(focus, minFrameFocus)}`, {
    ...context,
    frameFocus: focus,
    minFrameFocus,
    seenAs: reason,
  });
}

/**
 * localizeIris without the frame's focus (see the module comment). An eye refused as closed or
 * off-axis is looked for once more with reflections up to twice as wide (REFLECTION_SIZES): an eye
 * that fills the frame (a camera's crop round the iris) has its illuminators' reflections magnified
 * with it, past the 5 % of the short side the first search fills. A reflection left unfilled on the
 * pupil's rim bites into the pupil's outline, which then reads as an ellipse, or as no round pupil
 * at all. The second search keeps its answer only when it finds the eye; otherwise the first
 * refusal stands. An eye the first search finds is never looked for again, so nothing changes for
 * it and it costs nothing more.
 */
function localizeEye(img: GrayImage, opts: IrisCheckOptions): IrisLocalization {
  try {
    return localizeEyeWith(img, opts, REFLECTION_SIZES[0]);
  } catch (err) {
    if (!eyeNotFound(err)) throw err;
    try {
      return localizeEyeWith(img, opts, REFLECTION_SIZES[1]);
    } catch {
      throw err;
    }
  }
}

/**
 * The widest reflection filled, as a fraction of the working copy's short side: the first search's
 * (fillReflections' default), then the second's for an eye that fills the frame.
 */
const REFLECTION_SIZES = [REFLECTION_MAX_SIZE, 2 * REFLECTION_MAX_SIZE] as const;

/** A refusal that says no eye was found: closed (no round pupil in an iris) or off-axis. */
function eyeNotFound(err: unknown): err is AgentError {
  if (!(err instanceof AgentError) || err.code !== 'BIOMETRICS_UNUSABLE_CAPTURE') return false;
  const { reason } = err.context as { reason?: string };
  return reason === 'closed' || reason === 'off-axis';
}

function localizeEyeWith(img: GrayImage, opts: IrisCheckOptions, reflectionSize: number): IrisLocalization {
  const minR = opts.minIrisRadius ?? MIN_IRIS_RADIUS;
  const q = Math.max(1, Math.round(Math.min(img.width, img.height) / 240));
  const minAspect = opts.minAspect ?? MIN_ASPECT;
  // Sizes are judged below when the working copy is scaled down.
  const loc = localizeOnce(img, q > 1 ? { ...opts, minIrisRadius: 0 } : opts, reflectionSize);
  // A small eye in a large frame is found on a copy where its pupil is a few pixels across: found
  // again on a crop of the eye at the image's own resolution, where its outline can be judged.
  if (q > 1 && loc.iris.r < 2 * minR) {
    const half = Math.ceil(2.5 * loc.iris.r);
    const x0 = Math.max(0, Math.floor(loc.iris.x - half)),
      y0 = Math.max(0, Math.floor(loc.iris.y - half)),
      x1 = Math.min(img.width, Math.ceil(loc.iris.x + half)),
      y1 = Math.min(img.height, Math.ceil(loc.iris.y + half));
    const crop = new Uint8Array((x1 - x0) * (y1 - y0));
    for (let y = y0; y < y1; y++) crop.set(img.pixels.subarray(y * img.width + x0, y * img.width + x1), (y - y0) * (x1 - x0));
    const shift = (c: Circle): Circle => ({ x: c.x + x0, y: c.y + y0, r: c.r });
    try {
      // The shape of a pupil a few pixels across says little: an eye too small is refused as such
      // (or as closed when its pupil is not round), and the gaze judged only on one large enough.
      const again = localizeOnce({ width: x1 - x0, height: y1 - y0, pixels: crop }, { ...opts, minAspect: 0 }, reflectionSize);
      const result = { ...again, pupil: shift(again.pupil), iris: shift(again.iris) };
      if (result.aspect < minAspect) throw offAxis(result.aspect, minAspect, result.pupil, result.iris);
      return result;
    } catch (err) {
      if (err instanceof AgentError) {
        const ctx = err.context as { pupil?: Circle; iris?: Circle };
        throw new AgentError(
          err.code,
          err.message,
          { ...err.context, ...(ctx.pupil ? { pupil: shift(ctx.pupil) } : {}), ...(ctx.iris ? { iris: shift(ctx.iris) } : {}) },
          { hint: err.hint, retryable: true },
        );
      }
      throw err;
    }
  }
  if (loc.aspect < minAspect) throw offAxis(loc.aspect, minAspect, loc.pupil, loc.iris);
  return loc;
}

/** Localization on a working copy of about 240 px on its short side (see the module comment). */
function localizeOnce(img: GrayImage, opts: IrisCheckOptions, reflectionSize: number): IrisLocalization {
  const wk = downsample(img);
  const { w, h, q } = wk;
  const refl = fillReflections(wk.f, w, h, { maxSize: reflectionSize });
  const plane: Plane = { f: refl.image, w, h, holes: refl.mask };
  const quantile = grayQuantiles(refl.image);
  const range = Math.max(1, quantile(0.99) - quantile(0.01));
  // The limbus search's plane (see below) and its edges. Where it is the image the Hough transform
  // blurs, blurred alike (on any working copy under 387 px on its short side), the Hough transform
  // takes the same gradients instead of computing them again.
  const scleraAsSeen = maskedAsSclera(wk, refl.image);
  const limbusPlane: Plane = { f: gaussianBlur(scleraAsSeen, w, h, LIMBUS_SIGMA), w, h };
  const limbusGrad = sobel(limbusPlane.f, w, h);
  const sameBlur = scleraAsSeen === refl.image && gaussianBoxRadius(houghSigma(plane)) === gaussianBoxRadius(LIMBUS_SIGMA);
  const candidates = pupilCandidates(plane, range, quantile(0.01), sameBlur ? limbusGrad : undefined);
  const minAspect = opts.minAspect ?? MIN_ASPECT;
  const full = (c: Circle): Circle => ({ x: (c.x + 0.5) * q - 0.5, y: (c.y + 0.5) * q - 0.5, r: c.r * q });
  // The most pupil-like blob, sharp and large enough to have a shape (2.5 % of the short side),
  // seen as an ellipse: the gaze is off-axis (its iris is an ellipse too, which the limbus search
  // below does not look for).
  const first = candidates[0];
  if (first && first.aspect < minAspect && first.edgeWidth <= 4.5 && first.circle.r >= 0.025 * Math.min(w, h))
    throw offAxis(first.aspect, minAspect, full(first.circle));
  // The pupil is the most pupil-like candidate that has an iris round it: a limbus whose weaker
  // side steps up by 2.5 % of the gray range (a dark lash clump or a crypt has none). Where no
  // candidate has one, the same search on the inverted image: an iris brighter than what is round
  // it (a light iris under near infrared, framed by lid shadow and lashes rather than sclera).
  // There a step down is also the edge of a light iris's own bright inner zone (the collarette), so
  // the pupil/iris ratio allowed stops at INVERTED_MAX_RATIO.
  let pupilTrace: PupilTrace | null = null;
  let limbus: Limbus | null = null;
  const inverted = (): Plane => {
    const f = new Float32Array(limbusPlane.f.length);
    for (let i = 0; i < f.length; i++) f[i] = 255 - limbusPlane.f[i]!;
    return { f, w, h };
  };
  const passes = [
    { plane: () => limbusPlane, opts: {} },
    { plane: inverted, opts: { maxRatio: INVERTED_MAX_RATIO } },
  ];
  for (const { plane, opts } of passes) {
    const lp = plane();
    const edges = limbusEdges(lp, lp === limbusPlane ? limbusGrad : undefined);
    for (const t of candidates.slice(0, 3)) {
      const l = findLimbus(lp, t.circle, opts, edges);
      if (l && l.step >= 0.025 * range) {
        pupilTrace = t;
        limbus = l;
        break;
      }
    }
    if (limbus || !candidates.length) break;
  }
  if (!pupilTrace || !limbus) {
    throw unusable(
      'closed',
      'no eye found: no pupil with an iris round it (the eye is closed or not in view)',
      {},
      'ask the person to open the eye wide and look into the camera',
    );
  }
  // A pupil outline that explains few of its rays or explains them poorly may have followed a haze
  // of light inside the pupil (a crescent along its edge, brightest at the edge) rather than the
  // edge itself: traced again on a rise of a third of the way to the iris (the haze's own rise is
  // under that), and that outline kept when it fits its rays more closely and explains half of them.
  // Only on an iris large enough to be coded: on a smaller one, the first trace tells a far eye's
  // pupil from a closed eye's clump of lashes below.
  if (
    limbus.circle.r * q >= (opts.minIrisRadius ?? MIN_IRIS_RADIUS) &&
    (pupilTrace.fitted < RETRACE_FITTED || pupilTrace.fitError > RETRACE_FIT_ERROR)
  ) {
    let t = pupilTrace;
    for (let i = 0; i < 3; i++) t = tracePupil(plane, t.circle, HAZE_RISE);
    if (t.fitted >= 0.5 && t.fitError < pupilTrace.fitError && Math.abs(t.circle.r - pupilTrace.circle.r) < 0.3 * pupilTrace.circle.r)
      pupilTrace = t;
  }
  const pupil = pupilTrace.circle;
  const annulus = annulusStats(plane, pupil, limbus.circle);
  // A copy scaled down loses the pupil's outline: traced again on the image itself.
  const fine = q > 1 ? traceFullScale(img, full(pupil), { mask: refl.mask, w, h, q }) : null;
  if (fine) pupilTrace = { ...pupilTrace, fitted: fine.fitted, fitError: fine.fitError, aspect: fine.aspect };
  const fullPupil = fine ? fine.circle : full(pupil);
  const fullIris = full(limbus.circle);
  // The edge width counts relative to the iris: the code's Gabor filters see the iris at a scale
  // set by its size.
  const irisR = fullIris.r;
  const edgeWidth = (pupilTrace.edgeWidth * q) / irisR;
  const sharpness = Math.max(0, Math.min(1, 1 - (edgeWidth - 0.04) / 0.08));
  const maxWidth = opts.maxEdgeWidth ?? 0.06;
  // The focus of an iris too small to be coded, or under 25 px in radius on the working copy
  // (where the filter's 2 % of the radius is under the half pixel a kernel resolves), is not
  // measured: such an eye is refused as too small below, or found again on a crop at full
  // resolution (localizeIris), or, where its pupil's edge is wide, refused as blurred.
  const minR = opts.minIrisRadius ?? MIN_IRIS_RADIUS;
  const focus = irisR >= minR && limbus.circle.r >= 25 ? irisFocus(plane, pupil, limbus.circle) : Number.NaN;
  const minFocus = opts.minFocus ?? MIN_FOCUS;
  if (focus < minFocus) {
    throw blurred(`the iris texture's focus is ${shortOf(focus, minFocus)}`, {
      focus,
      minFocus,
      edgeWidth,
      pupil: fullPupil,
      iris: fullIris,
    });
  }
  // The pupil's edge width only where the focus could not be measured (too little iris in view).
  if (Number.isNaN(focus) && pupilTrace.edgeWidth > 4.5 && edgeWidth > maxWidth) {
    throw blurred(
      `the pupil's edge spreads over ${(100 * edgeWidth).toFixed(0)} % of the iris radius, at most ${(100 * maxWidth).toFixed(0)} %`,
      {
        edgeWidth,
        maxEdgeWidth: maxWidth,
        workingWidthPx: pupilTrace.edgeWidth,
        pupil: fullPupil,
        iris: fullIris,
      },
    );
  }
  if (irisR < minR) {
    // A small eye far from the camera still has a round pupil (most of its rays on one outline,
    // within 8 % of its radius) in an iris that stands out of what is round it (its limbus steps
    // up by at least 30 % of its pupil's step); a small dark clump of lashes on a closed lid, on
    // skin all round, has neither.
    if (pupilTrace.fitted < 0.6 || pupilTrace.fitError > 0.08 || limbus.step < 0.3 * pupilTrace.contrast) {
      throw unusable(
        'closed',
        'no eye found: what is darkest is not a round pupil in an iris (the eye is closed or not in view)',
        { pupil: fullPupil, pupilFitted: pupilTrace.fitted, pupilFitError: pupilTrace.fitError, limbusContrast: limbus.step },
        'ask the person to open the eye wide and look into the camera',
      );
    }
    throw unusable(
      'too-small',
      `the iris is ${Math.round(2 * irisR)} px across, at least ${2 * minR} px are needed`,
      {
        irisRadius: irisR,
        minIrisRadius: minR,
        pupil: fullPupil,
        iris: fullIris,
        pupilFitError: pupilTrace.fitError,
        limbusContrast: limbus.step,
        pupilContrast: pupilTrace.contrast,
      },
      'ask the person to come closer to the camera',
    );
  }
  return {
    pupil: fullPupil,
    iris: fullIris,
    sharpness,
    focus,
    aspect: pupilTrace.aspect,
    pupilContrast: pupilTrace.contrast,
    pupilEvenness: pupilTrace.spread / Math.max(1e-6, pupilTrace.contrast),
    pupilFitted: pupilTrace.fitted,
    pupilFitError: pupilTrace.fitError,
    irisLevel: annulus.level,
    irisSpread: annulus.spread,
    limbusContrast: limbus.step,
    limbusSupport: limbus.support,
    reflections: { count: refl.count, mask: refl.mask, width: w, height: h, scale: q },
    grayRange: range,
  };
}

/**
 * When the pupil is traced again with a higher rise (HAZE_RISE of the way from its level to the
 * brightest the ray reaches, against 0.2 in the first trace): its outline explains under
 * RETRACE_FITTED of its rays, or their RMS distance from it is over RETRACE_FIT_ERROR of its
 * radius. Chosen on MMU1's tuning half (034R_3: 55 % of the rays explained; 034R_1, 2, 4 and 5:
 * 80-89 %, 1.6-1.9 %).
 */
const RETRACE_FITTED = 0.7;
const RETRACE_FIT_ERROR = 0.04;
const HAZE_RISE = 0.35;

/**
 * Smallest share of its rays a dark blob's outline explains for the specks inside it to count as
 * its unevenness (see withoutSpecks). Chosen on the tuning halves: every blob that held specks
 * explained 52-100 % of its rays, except two wide dark regions without an outline (CASIA-Iris-
 * Interval 027L_3, whose pupil was taken for a speck and the eye refused as closed: 30 %; MMU1
 * 030R_4: 17 %).
 */
const SPECK_HOST_FITTED = 0.5;

/** The blur of the limbus search's plane, px. */
const LIMBUS_SIGMA = 1;

/**
 * Smallest focus of the iris texture accepted by default (iris-focus.ts). Set by
 * test/bench/iris-focus-calibration.ts on the tune halves of MMU1, CASIA-Iris-Interval, MMU2 and
 * CASIA-IrisV1 (284 captures that match their siblings), without looking at which real captures it
 * refuses: each blurred by Gaussians of 2-20 % of its iris radius (its own sensor noise added back),
 * coded on its own localization and compared with its unblurred siblings. Captures stop matching at
 * a blur of about 10 % of the iris radius (median; none matches at 16 %), where their focus is 0.061
 * (median; quartiles 0.043-0.086); 0.057 is the threshold with the fewest captures wrong over every
 * blur (matching ones refused plus non-matching ones kept: 441 of 2,556; 139 and 302). It keeps 9
 * of the 284 blurred by 16 % (there the band reads the pupil's and the limbus's blurred steps
 * reaching into the annulus, not the noise) and none blurred by 20 %, and refuses 23 captures
 * blurred by 0-6 % that still match. The measure before the noise was discounted, at its floor
 * of 0.044, called 566 wrong (188 and 378), kept 30 and 6 of them and refused 97. No unblurred
 * tune capture is under it (lowest 0.088).
 */
export const MIN_FOCUS = 0.057;

/**
 * Smallest focus of the whole frame (frameFocus in iris-focus.ts) under which an eye that cannot be
 * found is refused as blurred rather than closed or off-axis. Set by
 * test/bench/iris-focus-calibration.ts (`frame` in its summary) on the tune halves of MMU1,
 * CASIA-Iris-Interval, MMU2 and CASIA-IrisV1, like MIN_FOCUS: each capture blurred by 2-20 % of its
 * iris radius, its frame's focus against whether it still matches its siblings. The threshold with
 * the fewest wrong calls is 0.0398 over every blurred capture (377 of 2,556) and 0.0406 over those
 * the localization no longer finds (101 of 667; 0.040 gives 381 and 105; with the iris floor
 * before the sensor noise was discounted, 97 of 661 at the same 0.0406). Unblurred tune frames are
 * at 0.055 or more (CASIA-IrisV1; MMU1 0.104); sharp synthetic closed and off-axis eyes at about
 * 0.09 or more.
 */
const MIN_FRAME_FOCUS = 0.04;

/** Smallest pupil aspect ratio (minor / major axis) accepted by default. */
const MIN_ASPECT = 0.75;

/**
 * Largest pupil/iris radius ratio of a limbus found on the inverted image. The collarette of a
 * light iris (the edge of its bright inner zone, about a third of the way from the pupil to the
 * limbus) lies at a ratio of 3ρ/(1+2ρ) for a pupil/limbus ratio ρ: above 0.45 for every ρ above
 * 0.21, so it is not taken for the limbus. Chosen on CASIA-Iris-Interval's tuning half (043L_2 and
 * 043L_3 were found at 0.56, their other captures at about 0.3).
 */
const INVERTED_MAX_RATIO = 0.45;

/** Smallest iris radius accepted by default, px: an iris 80 px across (see IrisCheckOptions). */
const MIN_IRIS_RADIUS = 40;

/** The mask value of a cropped-and-masked iris image (ISO/IEC 19794-6 kind 7). */
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

/**
 * Median and robust spread of the gray level over the iris annulus (from 1.25 pupil radii to 0.9
 * of the limbus, along rays from the pupil's centre), the upper quarter (the eyelid's) left out.
 */
function annulusStats(p: Plane, pupil: Circle, iris: Circle): { level: number; spread: number } {
  const v: number[] = [];
  for (let k = 0; k < 64; k++) {
    const t = (2 * Math.PI * k) / 64;
    if (Math.sin(t) < -0.7) continue;
    const lim = limbusDistance(pupil, iris, t);
    for (let f = 0; f <= 1; f += 0.125) {
      const d = 1.25 * pupil.r + f * (0.9 * lim - 1.25 * pupil.r);
      const x = pupil.x + d * Math.cos(t),
        y = pupil.y + d * Math.sin(t);
      if (x >= 0 && y >= 0 && x <= p.w - 1 && y <= p.h - 1) v.push(sampleInside(p.f, p.w, p.h, x, y));
    }
  }
  if (!v.length) return { level: NaN, spread: NaN };
  v.sort((a, b) => a - b);
  const level = v[v.length >> 1]!;
  const dev = v.map((x) => Math.abs(x - level)).sort((a, b) => a - b);
  return { level, spread: 1.4826 * dev[dev.length >> 1]! };
}

/**
 * The pupil traced again on the image at its own resolution, in a window of three pupil radii
 * round it, from the circle found on the working copy. The reflections found on the working copy
 * (each working pixel covers q × q pixels here) are filled in the window first: the same
 * reflections, not searched for again.
 */
function traceFullScale(img: GrayImage, c: Circle, found: { mask: Uint8Array; w: number; h: number; q: number }): PupilTrace | null {
  const half = Math.ceil(3 * c.r);
  const x0 = Math.max(0, Math.floor(c.x - half)),
    y0 = Math.max(0, Math.floor(c.y - half)),
    x1 = Math.min(img.width, Math.ceil(c.x + half)),
    y1 = Math.min(img.height, Math.ceil(c.y + half));
  const w = x1 - x0,
    h = y1 - y0;
  if (w < 8 || h < 8) return null;
  const { q } = found;
  const f = new Float32Array(w * h);
  const mask = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      f[y * w + x] = img.pixels[(y + y0) * img.width + x + x0]!;
      // The working pixel that covers this one (the last row and column of a frame whose size is
      // not a multiple of q: the nearest).
      const wx = Math.min(found.w - 1, Math.floor((x + x0) / q)),
        wy = Math.min(found.h - 1, Math.floor((y + y0) / q));
      mask[y * w + x] = found.mask[wy * found.w + wx]!;
    }
  const p: Plane = { f: inpaint(f, mask, w, h), w, h, holes: mask };
  let t = tracePupil(p, { x: c.x - x0, y: c.y - y0, r: c.r });
  for (let i = 0; i < 2; i++) t = tracePupil(p, t.circle);
  if (!(t.fitted > 0) || Math.abs(t.circle.r - c.r) > 0.3 * c.r) return null;
  return { ...t, circle: { x: t.circle.x + x0, y: t.circle.y + y0, r: t.circle.r } };
}
