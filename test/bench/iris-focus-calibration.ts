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
 * The summary (stderr and `summary` in the JSON): per σ, the captures still matching and the
 * quartiles of their focus; the focus of each capture at the first σ where it no longer matches
 * (quartiles); and the focus threshold that best separates the captures that still match from
 * those that no longer do (fewest of both wrong, over every σ).
 *
 * The same for the whole frame's focus (frameFocus, read when an eye cannot be found: `frame` in the
 * summary), over the blurs above and two heavier ones (16 and 20 % of the iris radius, where eyes stop
 * being found): the threshold that best separates the blurred frames whose captures still match
 * from those that no longer do, over every blurred capture and over those the localization no
 * longer finds (refused as closed or off-axis, the frame's focus not read), with those refusals by σ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigSchema } from '../../src/config/config.js';
import { frameFocus, irisFocus } from '../../src/biometrics/extract/iris-focus.js';
import { codeOfResponse, encodeNormalized, extractIris, normalizeIris } from '../../src/biometrics/extract/iris-pipeline.js';
import { localizeIris, type IrisLocalization } from '../../src/biometrics/extract/iris-segmentation.js';
import { decodeImage } from '../../src/biometrics/image/decode-image.js';
import type { GrayImage } from '../../src/biometrics/image/gray-image.js';
import type { IrisCode } from '../../src/biometrics/iris/iris-code.js';
import { halvesOf } from './subject-halves.js';
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';

const { values } = parseArgs({ options: { iris: { type: 'string', multiple: true }, half: { type: 'string', default: 'tune' } } });
const defaults = ConfigSchema.parse({}).biometrics as { irisThreshold: number; irisShiftRange: number };
const SIGMAS = [0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12];
const OFF = { minFocus: Number.NEGATIVE_INFINITY, maxEdgeWidth: Number.POSITIVE_INFINITY };
const SIGMAS_FRAME = [0.16, 0.2];

/** The code of `img` on a given localization (the pipeline's steps after localizeIris). */
async function codeOn(img: GrayImage, loc: IrisLocalization): Promise<IrisCode> {
  const { bits, valid } = await encodeNormalized(normalizeIris(img, loc));
  return codeOfResponse(bits, valid);
}

/** The focus of `img` on a given localization (reflections found on the unblurred image left out). */
const focusOn = (img: GrayImage, loc: IrisLocalization) =>
  irisFocus({ f: Float32Array.from(img.pixels), w: img.width, h: img.height, holes: loc.reflections.mask }, loc.pupil, loc.iris);

/** Sensor noise σ (Immerkær 1996: the mean absolute response of a Laplacian difference mask). */
function noiseSigma(img: GrayImage): number {
  const { width: w, height: h, pixels: p } = img;
  let s = 0;
  for (let y = 1; y < h - 1; y++)
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      s += Math.abs(
        p[i - w - 1]! -
          2 * p[i - w]! +
          p[i - w + 1]! -
          2 * p[i - 1]! +
          4 * p[i]! -
          2 * p[i + 1]! +
          p[i + w - 1]! -
          2 * p[i + w]! +
          p[i + w + 1]!,
      );
    }
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
  focus: number | null;
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
    for (const k of [...SIGMAS, ...SIGMAS_FRAME]) {
      const blurred = gaussian(img, k * b.loc.iris.r, noise);
      const row: Row = {
        folder: dir.split('/').filter(Boolean).pop()!,
        file: f,
        sigma: k,
        focus: null,
        frameFocus: frameFocus({ f: Float32Array.from(blurred.pixels), w: blurred.width, h: blurred.height }),
        localized: localizedAs(blurred),
        medianHd: null,
        matches: false,
      };
      try {
        row.focus = focusOn(blurred, b.loc);
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
const perSigma = SIGMAS.map((k) => {
  const at = rows.filter((r) => r.sigma === k);
  const f = at.map((r) => r.focus).filter((x): x is number => x !== null && Number.isFinite(x));
  return {
    sigma: k,
    captures: at.length,
    stillMatching: at.filter((r) => r.matches).length,
    focusQuartiles: [q(f, 0.25), q(f, 0.5), q(f, 0.75)],
  };
});
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
// The iris floor on the blurs it was set on (SIGMAS); the frame's floor on every blur, and on the
// blurred captures whose own localization fails (the only ones it is read on).
const measured = rows.filter((r) => SIGMAS.includes(r.sigma) && r.focus !== null && Number.isFinite(r.focus));
const best = bestThreshold(measured, (r) => r.focus!);
const framed = rows.filter((r) => r.medianHd !== null && Number.isFinite(r.frameFocus));
const notFound = framed.filter((r) => r.localized === 'closed' || r.localized === 'off-axis');
// Each capture's focus at the first σ where it no longer matches its siblings.
const breaking = new Map<string, number>();
for (const r of [...measured].sort((a, b) => a.sigma - b.sigma))
  if (!r.matches && !breaking.has(`${r.folder}/${r.file}`)) breaking.set(`${r.folder}/${r.file}`, r.focus!);
const bf = [...breaking.values()];
const summary = {
  breakingFocusQuartiles: [q(bf, 0.25), q(bf, 0.5), q(bf, 0.75)],
  half: values.half,
  threshold: defaults.irisThreshold,
  perSigma,
  best,
  frame: {
    best: bestThreshold(framed, (r) => r.frameFocus),
    bestWhereNotFound: bestThreshold(notFound, (r) => r.frameFocus),
    unblurredMinAndQuartiles: [0, 0.25, 0.5, 0.75].map((p) =>
      q(
        rows.filter((r) => r.sigma === 0).map((r) => r.frameFocus),
        p,
      ),
    ),
    notFound: [...SIGMAS, ...SIGMAS_FRAME].map((k) => {
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
  matching: measured.filter((r) => r.matches).length,
  notMatching: measured.filter((r) => !r.matches).length,
};
process.stderr.write(`${JSON.stringify(summary, null, 1)}\n`);
process.stdout.write(`${JSON.stringify({ summary, rows }, null, 1)}\n`);
