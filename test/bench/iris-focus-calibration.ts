/**
 * Where the iris focus refusal belongs, measured without looking at which real captures it refuses:
 * every image of the tune half of each folder given (the same split by subject as bench:real) is
 * blurred by Gaussians of growing σ, a fraction of its own iris radius (so the figure holds on any
 * camera), with its own sensor noise added back (estimated by Immerkær's method: a defocused capture
 * keeps the sensor's noise), and coded on the localization of its unblurred self, so that what is
 * measured is what the blur takes from the texture, not whether the localization survives it. Each
 * blurred capture is compared with its unblurred siblings (the other images of its eye). Per capture
 * and σ: the focus measure (iris-focus.ts), the median fractional Hamming distance to its siblings
 * and whether that is still under the match threshold. Images that do not match their siblings
 * unblurred are left out (their failure is not focus). The working copy is the image itself on
 * these folders (short side under 360 px); a larger frame would need the segmentation's downsample.
 *
 *   npx tsx test/bench/iris-focus-calibration.ts --iris DIR [--iris DIR2 ...] [--half tune|report] > out.json
 *
 * The summary (stderr and `summary` in the JSON), for irisFocus (`focus`: the band with the sensor
 * noise's share taken out) and for the measure before the noise was discounted (`uncorrected`: the
 * band's median magnitude over the contrast), both read on every blur including 16 and 20 % of the
 * iris radius (where no capture still matches): per σ, the captures still matching and the
 * quartiles of the focus; the focus of each capture at the first σ where it no longer matches
 * (quartiles); the focus threshold that best separates the captures that still match from those
 * that no longer do (fewest of both wrong, over every σ; `bestUpTo12` over 0-12 % only, the blurs
 * the floor was first set on); and at that threshold (and, for irisFocus, at MIN_FOCUS) how many
 * captures blurred by 16 and 20 % it keeps and how many blurred by 0-6 % that still match it
 * refuses. `noiseReadOverAdded`: the noise irisFocus reads on each blurred capture over the noise
 * added back (quartiles per σ).
 *
 * The same for the whole frame's focus (frameFocus, read when an eye cannot be found: `frame` in the
 * summary), over the same blurs (eyes stop being found at 16 and 20 % of the iris radius): the
 * threshold that best separates the blurred frames whose captures still match from those that no longer do, over every blurred capture and over those the localization no
 * longer finds (refused as closed or off-axis, the frame's focus not read), with those refusals by σ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigSchema } from '../../src/config/config.js';
import { frameFocus, irisFocusReading, noiseMask } from '../../src/biometrics/extract/iris-focus.js';
import { codeOfResponse, encodeNormalized, extractIris, normalizeIris } from '../../src/biometrics/extract/iris-pipeline.js';
import { localizeIris, MIN_FOCUS, type IrisLocalization } from '../../src/biometrics/extract/iris-segmentation.js';
import { decodeImage } from '../../src/biometrics/image/decode-image.js';
import type { GrayImage } from '../../src/biometrics/image/gray-image.js';
import type { IrisCode } from '../../src/biometrics/iris/iris-code.js';
import { halvesOf } from './subject-halves.js';
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';

const { values } = parseArgs({ options: { iris: { type: 'string', multiple: true }, half: { type: 'string', default: 'tune' } } });
const defaults = ConfigSchema.parse({}).biometrics as { irisThreshold: number; irisShiftRange: number };
const SIGMAS = [0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12];
const OFF = { minFocus: Number.NEGATIVE_INFINITY, maxEdgeWidth: Number.POSITIVE_INFINITY };
/** Blurs where no capture still matches: what a focus floor must refuse, read by both the iris's focus and the frame's. */
const SIGMAS_HEAVY = [0.16, 0.2];

/** The code of `img` on a given localization (the pipeline's steps after localizeIris). */
async function codeOn(img: GrayImage, loc: IrisLocalization): Promise<IrisCode> {
  const { bits, valid } = await encodeNormalized(normalizeIris(img, loc));
  return codeOfResponse(bits, valid);
}

/** The focus reading of `img` on a given localization (reflections found on the unblurred image left out). */
const focusOn = (img: GrayImage, loc: IrisLocalization) =>
  irisFocusReading({ f: Float32Array.from(img.pixels), w: img.width, h: img.height, holes: loc.reflections.mask }, loc.pupil, loc.iris);

/** Sensor noise σ (Immerkær 1996: the mean absolute response of his mask over the image, × sqrt(π/2) / 6). */
function noiseSigma(img: GrayImage): number {
  const { width: w, height: h, pixels: p } = img;
  let s = 0;
  for (let y = 1; y < h - 1; y++) for (let x = 1; x < w - 1; x++) s += Math.abs(noiseMask(p, w, y * w + x));
  return (Math.sqrt(Math.PI / 2) * s) / (6 * (w - 2) * (h - 2));
}

let seed = 12345;
const uniform = () => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return (seed + 0.5) / 2 ** 32;
};
const gauss = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());

/** The image blurred by a Gaussian of σ px, its own noise added back. */
function gaussian(img: GrayImage, sigma: number, noise: number): GrayImage {
  if (sigma <= 0) return img;
  const { width: w, height: h } = img;
  const r = Math.ceil(3 * sigma);
  const k = Float64Array.from({ length: 2 * r + 1 }, (_, i) => Math.exp(-((i - r) ** 2) / (2 * sigma * sigma)));
  const sum = k.reduce((a, b) => a + b, 0);
  const tmp = new Float64Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r]! * img.pixels[y * w + Math.min(w - 1, Math.max(0, x + i))]!;
      tmp[y * w + x] = s / sum;
    }
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r]! * tmp[Math.min(h - 1, Math.max(0, y + i)) * w + x]!;
      out[y * w + x] = Math.max(0, Math.min(255, Math.round(s / sum + noise * gauss())));
    }
  return { width: w, height: h, pixels: out };
}

/** Why the blurred image's own localization refuses it ('accepted' when it does not), the frame's focus not read. */
function localizedAs(img: GrayImage): string {
  try {
    localizeIris(img, { minFrameFocus: Number.NEGATIVE_INFINITY });
    return 'accepted';
  } catch (err) {
    return String((err as { context?: { reason?: string } }).context?.reason ?? err);
  }
}

interface Row {
  folder: string;
  file: string;
  sigma: number;
  /** irisFocus (the band with the noise's share taken out, over the contrast). */
  focus: number | null;
  /** The measure before the noise was discounted: the band's median magnitude over the contrast. */
  focusUncorrected: number | null;
  /** The sensor noise added back (Immerkær's estimate on the unblurred capture) and the one irisFocus reads on the blurred one. */
  noiseAdded: number;
  noiseRead: number | null;
  /** The focus of the whole blurred frame (frameFocus), and why its own localization refuses it (before the frame's focus is read). */
  frameFocus: number;
  localized: string;
  medianHd: number | null;
  matches: boolean;
  refused?: string;
}

const rows: Row[] = [];
for (const dir of values.iris ?? []) {
  const files = readdirSync(dir)
    .filter((f) => /^(.+)_([^_]+)\.png$/i.test(f))
    .sort();
  const subjectOf = (f: string) => f.slice(0, f.lastIndexOf('_'));
  const half = halvesOf(files.map(subjectOf));
  const mine = files.filter((f) => half.get(subjectOf(f)) === values.half);
  const base = new Map<string, { code: IrisCode; loc: IrisLocalization }>();
  for (const f of mine) {
    try {
      const x = await extractIris(decodeImage(readFileSync(join(dir, f))), OFF);
      base.set(f, { code: x.code, loc: x.localization });
    } catch {
      // Not localised unblurred: not a focus question.
    }
  }
  const medianHd = (code: IrisCode, f: string): number | null => {
    const hd = mine
      .filter((g) => g !== f && subjectOf(g) === subjectOf(f) && base.has(g))
      .map((g) => compareIrisCodes(code, base.get(g)!.code, { shiftRange: defaults.irisShiftRange }).hd)
      .sort((a, b) => a - b);
    return hd.length ? hd[(hd.length - 1) >> 1]! : null;
  };
  for (const f of mine) {
    const b = base.get(f);
    if (!b) continue;
    const m0 = medianHd(b.code, f);
    if (m0 === null || m0 >= defaults.irisThreshold) continue;
    const img = decodeImage(readFileSync(join(dir, f)));
    const noise = noiseSigma(img);
    for (const k of [...SIGMAS, ...SIGMAS_HEAVY]) {
      const blurred = gaussian(img, k * b.loc.iris.r, noise);
      const row: Row = {
        folder: dir.split('/').filter(Boolean).pop()!,
        file: f,
        sigma: k,
        focus: null,
        focusUncorrected: null,
        noiseAdded: noise,
        noiseRead: null,
        frameFocus: frameFocus({ f: Float32Array.from(blurred.pixels), w: blurred.width, h: blurred.height }),
        localized: localizedAs(blurred),
        medianHd: null,
        matches: false,
      };
      try {
        const reading = focusOn(blurred, b.loc);
        row.focus = reading.focus;
        row.focusUncorrected = reading.bandMedian / reading.spread;
        row.noiseRead = reading.noise;
        row.medianHd = k ? medianHd(await codeOn(blurred, b.loc), f) : m0;
        row.matches = row.medianHd !== null && row.medianHd < defaults.irisThreshold;
      } catch (err) {
        row.refused = String((err as { context?: { reason?: string } }).context?.reason ?? err);
      }
      rows.push(row);
    }
    process.stderr.write('.');
  }
}
process.stderr.write('\n');

const q = (v: number[], p: number) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? Math.round(1000 * s[Math.floor(p * (s.length - 1))]!) / 1000 : null;
};
/** The threshold on `of` with the fewest wrong: matching captures refused plus non-matching ones kept. */
function bestThreshold(list: Row[], of: (r: Row) => number) {
  const cands = [...new Set(list.map(of))].sort((a, b) => a - b);
  let best = { threshold: 0, refusedMatching: 0, keptNotMatching: Infinity, of: list.length };
  for (const t of cands) {
    const refusedMatching = list.filter((r) => r.matches && of(r) < t).length;
    const keptNotMatching = list.filter((r) => !r.matches && of(r) >= t).length;
    if (refusedMatching + keptNotMatching < best.refusedMatching + best.keptNotMatching)
      best = { threshold: t, refusedMatching, keptNotMatching, of: list.length };
  }
  best.threshold = Math.round(1e4 * best.threshold) / 1e4;
  return best;
}
// The iris floor on every blur (SIGMAS and SIGMAS_HEAVY, all measured on the unblurred
// localization); the frame's floor on every blur, and on the blurred captures whose own
// localization fails (the only ones it is read on).
const ALL_SIGMAS = [...SIGMAS, ...SIGMAS_HEAVY];
/** One iris focus measure on every blur: where it separates, and what its best threshold and a given floor call wrong. */
function judged(of: (r: Row) => number | null, floor?: number) {
  const measured = rows.filter((r) => Number.isFinite(of(r) ?? Number.NaN));
  const value = (r: Row) => of(r)!;
  const best = bestThreshold(measured, value);
  // At a threshold: the captures blurred by 16-20 % of the iris radius it keeps (none of them
  // matches), and the captures blurred by 0-6 % that still match and that it refuses.
  const calls = (t: number) => ({
    threshold: t,
    keptAtHeavyBlur: Object.fromEntries(SIGMAS_HEAVY.map((k) => [k, measured.filter((r) => r.sigma === k && value(r) >= t).length])),
    refusedMatchingAt0to6: measured.filter((r) => r.sigma <= 0.06 && r.matches && value(r) < t).length,
  });
  // Each capture's focus at the first σ where it no longer matches its siblings.
  const breaking = new Map<string, number>();
  for (const r of [...measured].sort((a, b) => a.sigma - b.sigma))
    if (!r.matches && !breaking.has(`${r.folder}/${r.file}`)) breaking.set(`${r.folder}/${r.file}`, value(r));
  const bf = [...breaking.values()];
  return {
    best,
    /** The same criterion over the blurs the floor was first set on (2-12 %). */
    bestUpTo12: bestThreshold(
      measured.filter((r) => SIGMAS.includes(r.sigma)),
      value,
    ),
    atBest: calls(best.threshold),
    ...(floor === undefined ? {} : { atFloor: calls(floor) }),
    breakingFocusQuartiles: [q(bf, 0.25), q(bf, 0.5), q(bf, 0.75)],
    perSigma: ALL_SIGMAS.map((k) => {
      const at = measured.filter((r) => r.sigma === k);
      const f = at.map(value);
      return {
        sigma: k,
        captures: at.length,
        stillMatching: at.filter((r) => r.matches).length,
        focusQuartiles: [q(f, 0.25), q(f, 0.5), q(f, 0.75)],
      };
    }),
    matching: measured.filter((r) => r.matches).length,
    notMatching: measured.filter((r) => !r.matches).length,
  };
}
const framed = rows.filter((r) => r.medianHd !== null && Number.isFinite(r.frameFocus));
const notFound = framed.filter((r) => r.localized === 'closed' || r.localized === 'off-axis');
const summary = {
  half: values.half,
  threshold: defaults.irisThreshold,
  /** irisFocus as the product reads it, at its best threshold and at the floor in use (MIN_FOCUS). */
  focus: judged((r) => r.focus, MIN_FOCUS),
  /** The measure before the noise was discounted (the band's median magnitude over the contrast). */
  uncorrected: judged((r) => r.focusUncorrected),
  /** irisFocus's noise against the noise added back (their ratio's quartiles), per blur. */
  noiseReadOverAdded: ALL_SIGMAS.map((k) => {
    const at = rows.filter((r) => r.sigma === k && r.noiseRead !== null && r.noiseAdded > 0);
    const v = at.map((r) => r.noiseRead! / r.noiseAdded);
    return { sigma: k, quartiles: [q(v, 0.25), q(v, 0.5), q(v, 0.75)] };
  }),
  frame: {
    best: bestThreshold(framed, (r) => r.frameFocus),
    bestWhereNotFound: bestThreshold(notFound, (r) => r.frameFocus),
    unblurredMinAndQuartiles: [0, 0.25, 0.5, 0.75].map((p) =>
      q(
        rows.filter((r) => r.sigma === 0).map((r) => r.frameFocus),
        p,
      ),
    ),
    notFound: ALL_SIGMAS.map((k) => {
      const at = notFound.filter((r) => r.sigma === k);
      const reasons: Record<string, number> = {};
      for (const r of at) reasons[r.localized] = (reasons[r.localized] ?? 0) + 1;
      return {
        sigma: k,
        reasons,
        matching: at.filter((r) => r.matches).length,
        frameFocusMax: q(
          at.map((r) => r.frameFocus),
          1,
        ),
      };
    }),
  },
};
process.stderr.write(`${JSON.stringify(summary, null, 1)}\n`);
process.stdout.write(`${JSON.stringify({ summary, rows }, null, 1)}\n`);
