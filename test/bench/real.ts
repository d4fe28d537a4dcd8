/**
 * `npm run bench:real -- --fingers DIR [--dpi N] --iris DIR [--iris DIR2] [--degrade] [--json]`
 *
 * Recognition on real captures, FVC-style. Every `<subject>_<impression>.(png|pgm)` image of a
 * folder is extracted in-process through the product's pipeline (the same call as
 * `edge-agent template extract`); a refused image is a failure to enrol (fingers) or to acquire
 * (irises), listed with its code and reason. Then every genuine pair (two impressions of one
 * subject) and every cross-subject impostor pair is compared once (a < b). A pair with a refused
 * image counts as a non-match, so refusals show in the FNMR as they would at the terminal.
 *
 * Per modality (and per iris folder): fte (finger; iris: fta, and fte with the same value), eer, fnmrAtFmr1e2, fnmrAtFmr1e3
 * (null, with a note, when fewer than 1/FMR impostor pairs exist), fnmrAtThreshold and fmrAtThreshold
 * at the configured threshold (config defaults: fingerThreshold, irisThreshold), extractP50Ms /
 * extractP95Ms (wall clock, single image, sequential) beside the CPU time, and the ratio to the
 * floor: SourceAFIS 3.18.1 on the shared finger set (EER 0.07 %, FNMR 0.22 % at FMR 1e-3, no
 * refusal) and the iris targets (FTA ≤ 5 %, EER ≤ 1 % on each set). `quality` shows whether the
 * quality score predicts the errors: the genuine pairs sorted by the lower quality of their two
 * captures, the false non-matches that involve the lowest-quality fifth of the captures, and the
 * error-versus-reject curve (FNMR after refusing the worst 0/5/10/20 % of captures); in each of
 * `halves` these read the half's own captures (its lowest fifth, its worst shares).
 *
 * `asEnrolled` (iris, every folder and half) scores as the terminal decides: each eye's first three
 * acquired captures are its gallery (an enrolment stores three), its later captures probes scored by
 * the best of them; see `asEnrolled` below. Its `openSet` searches each probe as the terminal does
 * (the 1:N decision by the gallery's size, iris-decision.ts, beside the fixed threshold): FNIR with
 * the probe's eye enrolled, FPIR with it left out. `irisChanceTail` (top level, without `--half`)
 * fits the tail of one impostor comparison over every iris folder's tuning half, pooled: the line
 * iris-decision.ts decides with, printed beside it and checked on the reporting halves.
 *
 * `--degrade` adds `fingerWithPoorCaptures`: the finger folder again with, beside every image, a
 * poor capture of the same finger made from it (faint, smudged, partial or dry in turn, see
 * src/synthetic/poor-capture.ts), and `byCapture`: per kind its quality and refusals and the share of the false
 * non-matches at the threshold it carries. A real set of good captures has too few errors to show
 * where they come from; this shows whether the quality score points at the captures that cause them.
 *
 * `--worst N` adds `worst` to every folder and half: its N worst-scoring genuine pairs and N
 * best-scoring impostor pairs by file name (a refused image shows as `refused`), to see which
 * captures carry the errors without a debugger.
 *
 * Resolution: `--dpi N` for the finger folder; without it each image's own resolution (PNG pHYs,
 * PGM comment) is used, and an image without one is taken as 500 dpi and counted in `dpiAssumed`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigSchema } from '../../src/config/config.js';
import { extractTemplate } from '../../src/biometrics/extract/extract-image.js';
import { decodeImage } from '../../src/biometrics/image/decode-image.js';
import { decodeFingerTemplate } from '../../src/biometrics/finger/iso19794-2.js';
import { FingerProbe, compareProbe, prepareFinger, type PreparedFinger } from '../../src/biometrics/finger/matcher.js';
import { decodeIrisTemplate, type IrisCode } from '../../src/biometrics/iris/iris-code.js';
import { IRIS_CHANCE_TAIL, irisChanceFmr, irisIdentificationThreshold } from '../../src/biometrics/iris/iris-decision.js';
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';
import { toAgentError } from '../../src/core/errors.js';
import { ENROLL_CAPTURES } from '../../src/terminal/enroller.js';
import { DEGRADATIONS, degradeFinger, type Degradation } from '../../src/synthetic/poor-capture.js';
import { halvesOf, type Half } from './subject-halves.js';
import { equalErrorRate, fnmrAtFmr, nextUp, quantile, ratesAt, sortedScores } from './error-rates.js';

const { values } = parseArgs({
  options: {
    fingers: { type: 'string', multiple: true },
    dpi: { type: 'string' },
    iris: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    degrade: { type: 'boolean' },
    half: { type: 'string' },
    'max-impostors': { type: 'string' },
    worst: { type: 'string' },
  },
  strict: true,
});
if (!values.fingers?.length && !values.iris?.length) {
  process.stderr.write(
    'usage: npm run bench:real -- --fingers DIR [--fingers DIR2] [--dpi N] --iris DIR [--iris DIR2] [--half tune|report] [--max-impostors N] [--worst N] [--degrade] [--json]\n',
  );
  process.exit(2);
}
if (values.half !== undefined && values.half !== 'tune' && values.half !== 'report') {
  process.stderr.write(`--half ${values.half}: give tune or report\n`);
  process.exit(2);
}
const onlyHalf = values.half as Half | undefined;
const maxImpostors = values['max-impostors'] !== undefined ? Number(values['max-impostors']) : 300_000;
if (!(maxImpostors >= 1000)) {
  process.stderr.write(`--max-impostors ${values['max-impostors']}: give at least 1000\n`);
  process.exit(2);
}
const worstN = values.worst !== undefined ? Number(values.worst) : 0;
if (!(Number.isInteger(worstN) && worstN >= 0 && worstN <= 1000)) {
  process.stderr.write(`--worst ${values.worst}: give 0..1000\n`);
  process.exit(2);
}
const log = (m: string) => {
  if (!values.json) process.stderr.write(`${m}\n`);
};

const FINGER_FLOOR = { source: 'SourceAFIS 3.18.1 on the shared pyfnprint set at 500 dpi', eer: 0.0007, fnmrAtFmr1e3: 0.0022, fte: 0 };
const IRIS_FLOOR = { source: 'issue 14 target on each of MMU2 and CASIA-IrisV1', fta: 0.05, eer: 0.01 };

const defaults = ConfigSchema.parse({}).biometrics as { fingerThreshold: number; irisThreshold: number; irisShiftRange: number };

interface Sample {
  file: string;
  subject: string;
  impression: string;
  degrade?: Degradation;
}

/**
 * `<subject>_<impression>.(png|pgm)`: the subject is everything before the last underscore. A
 * folder without images but with subfolders (SOCOFing's `real/` and `altered-easy/`) is read
 * one level down, so the alterations of a capture pair with it.
 */
function listSamples(dir: string): Sample[] {
  const out: Sample[] = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const read = (folder: string, names: string[]) => {
    for (const file of names) {
      const m = /^(.+)_([^_]+)\.(png|pgm)$/i.exec(file);
      if (m) out.push({ file: join(folder, file), subject: m[1]!, impression: m[2]! });
    }
  };
  read(
    dir,
    entries.filter((e) => e.isFile()).map((e) => e.name),
  );
  if (!out.length)
    for (const sub of entries.filter((e) => e.isDirectory())) read(join(dir, sub.name), readdirSync(join(dir, sub.name)).sort());
  if (!out.length) throw new Error(`${dir}: no <subject>_<impression>.png|pgm images`);
  return out;
}

/** The samples of a folder, with `--half` applied, and each subject's half. */
function folderSamples(dir: string): { samples: Sample[]; half: Map<string, Half> } {
  const all = listSamples(dir);
  const half = halvesOf(all.map((s) => s.subject));
  return { samples: onlyHalf ? all.filter((s) => half.get(s.subject) === onlyHalf) : all, half };
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const r4 = (x: number | null) => (x === null || !Number.isFinite(x) ? x : Math.round(x * 1e4) / 1e4);
const r1 = (x: number) => Math.round(x * 10) / 10;

interface Extracted<T> {
  sample: Sample;
  ok: T | null;
  quality: number;
  failure?: { code: string; reason: string | null; message: string };
  ms: number;
  cpu: number;
  dpi?: number | undefined;
}

async function extractAll<T>(
  samples: Sample[],
  modality: 'finger' | 'iris',
  decode: (b: Uint8Array) => T,
  dpiFlag?: number,
): Promise<{ items: Extracted<T>[]; dpiAssumed: number }> {
  const items: Extracted<T>[] = [];
  let dpiAssumed = 0;
  // Warm-up: the first extraction creates the ONNX session and JIT-compiles.
  await extractTemplate({ modality, image: decodeImage(readFileSync(samples[0]!.file)) }).catch(() => undefined);
  for (const s of samples) {
    const read = decodeImage(readFileSync(s.file));
    const image = s.degrade ? degradeFinger(read, s.degrade, items.length) : read;
    const c0 = cpuMs(),
      t0 = performance.now();
    try {
      // The pipeline reads the image at the resolution given, else the one it states, else 500.
      const r = await extractTemplate({
        modality,
        image,
        ...(modality === 'finger' && dpiFlag !== undefined ? { finger: { dpi: dpiFlag } } : {}),
      });
      if (r.dpiSource === 'assumed') dpiAssumed++;
      items.push({ sample: s, ok: decode(r.template), quality: r.quality, ms: performance.now() - t0, cpu: cpuMs() - c0, dpi: r.dpi });
    } catch (err) {
      const e = toAgentError(err);
      items.push({
        sample: s,
        ok: null,
        quality: 0,
        failure: { code: e.code, reason: (e.context.reason as string | undefined) ?? null, message: e.message },
        ms: performance.now() - t0,
        cpu: cpuMs() - c0,
        dpi: undefined,
      });
    }
  }
  return { items, dpiAssumed };
}

interface PairScores {
  gen: number[];
  imp: number[];
  genPairs: Array<[number, number]>;
  impPairs: Array<[number, number]>;
}

/**
 * Every genuine and cross-subject impostor pair once (a < b); a refused image scores -Infinity.
 * Past `maxImpostors` impostor pairs every k-th one is kept (deterministic), so a folder of
 * thousands of images (SOCOFing) is compared in minutes; the genuine pairs are all kept.
 */
function allPairs<T>(items: Extracted<T>[], score: (a: T, b: T, ia: number, ib: number) => number): PairScores {
  const out: PairScores = { gen: [], imp: [], genPairs: [], impPairs: [] };
  let genuine = 0;
  const bySubject = new Map<string, number>();
  for (const i of items) bySubject.set(i.sample.subject, (bySubject.get(i.sample.subject) ?? 0) + 1);
  for (const n of bySubject.values()) genuine += (n * (n - 1)) / 2;
  const impostors = (items.length * (items.length - 1)) / 2 - genuine;
  const stride = Math.max(1, Math.ceil(impostors / maxImpostors));
  let k = 0;
  for (let a = 0; a < items.length; a++)
    for (let b = a + 1; b < items.length; b++) {
      const A = items[a]!,
        B = items[b]!;
      const same = A.sample.subject === B.sample.subject;
      if (!same && k++ % stride !== 0) continue;
      const s = A.ok !== null && B.ok !== null ? score(A.ok, B.ok, a, b) : -Infinity;
      if (same) {
        out.gen.push(s);
        out.genPairs.push([a, b]);
      } else {
        out.imp.push(s);
        out.impPairs.push([a, b]);
      }
    }
  return out;
}

/** The pairs whose two images are both in `keep`. */
function subsetPairs(p: PairScores, keep: (i: number) => boolean): PairScores {
  const out: PairScores = { gen: [], imp: [], genPairs: [], impPairs: [] };
  p.genPairs.forEach(([a, b], k) => {
    if (keep(a) && keep(b)) {
      out.gen.push(p.gen[k]!);
      out.genPairs.push([a, b]);
    }
  });
  p.impPairs.forEach(([a, b], k) => {
    if (keep(a) && keep(b)) {
      out.imp.push(p.imp[k]!);
      out.impPairs.push([a, b]);
    }
  });
  return out;
}

function spearman(x: number[], y: number[]): number {
  const rank = (v: number[]) => {
    const idx = v.map((_, i) => i).sort((a, b) => v[a]! - v[b]!);
    const r = new Array<number>(v.length);
    for (let i = 0; i < idx.length; ) {
      let j = i;
      while (j + 1 < idx.length && v[idx[j + 1]!] === v[idx[i]!]) j++;
      for (let k = i; k <= j; k++) r[idx[k]!] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const rx = rank(x),
    ry = rank(y),
    n = x.length;
  const mx = rx.reduce((a, b) => a + b, 0) / n,
    my = ry.reduce((a, b) => a + b, 0) / n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (rx[i]! - mx) * (ry[i]! - my);
    sxx += (rx[i]! - mx) ** 2;
    syy += (ry[i]! - my) ** 2;
  }
  return sxx && syy ? sxy / Math.sqrt(sxx * syy) : 0;
}

/**
 * Does the quality score carry the errors? (see the module comment) The lowest fifth and the
 * rejected shares are quantiles of the captures in `keep` (the folder, or one half of it), so a
 * half's figures are its own: a quality rule chosen on the tune half is read on the report half.
 */
function qualityReport<T>(items: Extracted<T>[], p: PairScores, threshold: number, keep: (i: number) => boolean = () => true) {
  const q = items.map((i) => i.quality);
  const sortedQ = q.filter((_, i) => keep(i)).sort((a, b) => a - b);
  const lowCut = quantile(sortedQ, 0.2);
  const isLow = (i: number) => q[i]! <= lowCut;
  const pairQ = p.genPairs.map(([a, b]) => Math.min(q[a]!, q[b]!));
  const fnm = p.gen.map((s, k) => ({ s, k })).filter((g) => g.s < threshold);
  const withLow = fnm.filter((g) => isLow(p.genPairs[g.k]![0]) || isLow(p.genPairs[g.k]![1])).length;
  const pairsWithLow = p.genPairs.filter(([a, b]) => isLow(a) || isLow(b)).length;
  // Error versus reject: refuse the worst fraction of captures, FNMR at the same threshold.
  const erc = [0, 0.05, 0.1, 0.2].map((reject) => {
    const cut = reject === 0 ? -Infinity : quantile(sortedQ, reject);
    const kept = p.gen.filter((_, k) => Math.min(q[p.genPairs[k]![0]]!, q[p.genPairs[k]![1]]!) > cut);
    return {
      rejectedCaptures: reject,
      fnmr: r4(kept.length ? kept.filter((s) => s < threshold).length / kept.length : 0),
      genuinePairs: kept.length,
    };
  });
  return {
    min: sortedQ[0],
    p20: lowCut,
    median: quantile(sortedQ, 0.5),
    max: sortedQ[sortedQ.length - 1],
    genuineScoreVsPairQuality: r4(
      spearman(
        pairQ,
        p.gen.map((s) => (Number.isFinite(s) ? s : -1e9)),
      ),
    ),
    falseNonMatches: fnm.length,
    falseNonMatchesWithLowQualityCapture: withLow,
    lowQualityShareOfFalseNonMatches: fnm.length ? r4(withLow / fnm.length) : null,
    lowQualityShareOfGenuinePairs: r4(pairsWithLow / p.genPairs.length),
    errorVersusReject: erc,
  };
}

/**
 * Per kind of capture (good, or how it was made poor): its quality, its refusals, and the false
 * non-matches at the threshold that involve it (a pair of two poor captures counts for both; for
 * the good ones, the pairs of two good captures).
 */
function byCapture<T>(items: Extracted<T>[], p: PairScores, threshold: number) {
  const kindOf = (i: number) => items[i]!.sample.degrade ?? 'good';
  const fnm = p.genPairs.filter((_, k) => p.gen[k]! < threshold);
  const out: Record<string, unknown> = {};
  for (const kind of ['good', ...DEGRADATIONS]) {
    const idx = items.map((_, i) => i).filter((i) => kindOf(i) === kind);
    const q = idx
      .filter((i) => items[i]!.ok)
      .map((i) => items[i]!.quality)
      .sort((a, b) => a - b);
    // Good captures: pairs of two good ones; a poor kind: every pair it is in.
    const involves = ([a, b]: [number, number]) =>
      kind === 'good' ? kindOf(a) === kind && kindOf(b) === kind : kindOf(a) === kind || kindOf(b) === kind;
    const pairs = p.genPairs.filter(involves);
    const misses = fnm.filter(involves).length;
    out[kind] = {
      captures: idx.length,
      refused: idx.length - q.length,
      qualityMedian: q.length ? quantile(q, 0.5) : null,
      qualityP20: q.length ? quantile(q, 0.2) : null,
      genuinePairs: pairs.length,
      fnmrAtThreshold: r4(pairs.length ? misses / pairs.length : 0),
      shareOfFalseNonMatches: fnm.length ? r4(misses / fnm.length) : null,
    };
  }
  return { threshold, falseNonMatches: fnm.length, kinds: out };
}

function rates(p: PairScores, threshold: number) {
  const gen = sortedScores(p.gen),
    imp = sortedScores(p.imp);
  const at2 = fnmrAtFmr(gen, imp, 1e-2),
    at3 = fnmrAtFmr(gen, imp, 1e-3);
  const atT = ratesAt(gen, imp, threshold);
  const notes: string[] = [];
  for (const [name, at] of [
    ['1e-2', at2],
    ['1e-3', at3],
  ] as const) {
    if (!at.resolved)
      notes.push(`FMR ${name} needs at least ${at.impostorsNeeded} impostor pairs, this set has ${imp.length}: not resolved`);
  }
  return {
    genuinePairs: gen.length,
    impostorPairs: imp.length,
    eer: r4(equalErrorRate(gen, imp)),
    fnmrAtFmr1e2: r4(at2.fnmr),
    fnmrAtFmr1e3: r4(at3.fnmr),
    fnmrAtThreshold: r4(atT.fnmr),
    fmrAtThreshold: r4(atT.fmr),
    fnmrAtZeroFmr: r4(ratesAt(gen, imp, nextUp(imp[imp.length - 1] ?? -Infinity)).fnmr),
    thresholdAtFmr1e2: at2.threshold === null ? null : r4(at2.threshold),
    thresholdAtFmr1e3: at3.threshold === null ? null : r4(at3.threshold),
    notes,
  };
}

function timing<T>(items: Extracted<T>[]) {
  const ms = items.map((i) => i.ms).sort((a, b) => a - b),
    cpu = items.map((i) => i.cpu).sort((a, b) => a - b);
  return {
    extractP50Ms: r1(quantile(ms, 0.5)),
    extractP95Ms: r1(quantile(ms, 0.95)),
    extractCpuP50Ms: r1(quantile(cpu, 0.5)),
    extractCpuP95Ms: r1(quantile(cpu, 0.95)),
  };
}

/**
 * `--worst N`: the N genuine pairs that score worst and the N impostor pairs that score best, by
 * file name, in the modality's own unit (`sign` -1 turns the negated iris distance back).
 */
function worstPairs<T>(items: Extracted<T>[], p: PairScores, n: number, sign: 1 | -1) {
  const name = (i: number) => basename(items[i]!.sample.file).replace(/\.[^.]+$/, '');
  const list = (scores: number[], pairs: Array<[number, number]>, worstFirst: (a: number, b: number) => number) =>
    scores
      .map((s, k) => ({ s, k }))
      .sort((x, y) => worstFirst(x.s, y.s))
      .slice(0, n)
      .map(({ s, k }) => ({ a: name(pairs[k]![0]), b: name(pairs[k]![1]), score: Number.isFinite(s) ? r4(sign * s) : 'refused' }));
  return { genuine: list(p.gen, p.genPairs, (x, y) => x - y), impostor: list(p.imp, p.impPairs, (x, y) => y - x) };
}

function failures<T>(items: Extracted<T>[]) {
  return items.filter((i) => i.failure).map((i) => ({ file: basename(i.sample.file), ...i.failure! }));
}

/**
 * Per half: the figures of the pairs inside it, and how far apart the two halves are (the larger
 * over the smaller of EER and FNMR at FMR 1e-3; 1 when both are 0, null when one is 0 and the other
 * not or when a half cannot resolve the level).
 */
function byHalf<R extends { eer: number | null; fnmrAtFmr1e3: number | null }>(
  items: Extracted<unknown>[],
  half: Map<string, Half>,
  figures: (keep: (i: number) => boolean, subset: Extracted<unknown>[]) => R,
) {
  const halves: Partial<Record<Half, R & { subjects: number; images: number }>> = {};
  for (const h of ['tune', 'report'] as const) {
    const inHalf = (i: number) => half.get(items[i]!.sample.subject) === h;
    const subset = items.filter((_, i) => inHalf(i));
    if (!subset.length) continue;
    halves[h] = { subjects: new Set(subset.map((i) => i.sample.subject)).size, images: subset.length, ...figures(inHalf, subset) };
  }
  const gap = (k: 'eer' | 'fnmrAtFmr1e3') => {
    const a = halves.tune?.[k],
      b = halves.report?.[k];
    if (a === null || a === undefined || b === null || b === undefined) return null;
    if (a === 0 && b === 0) return 1;
    return Math.min(a, b) === 0 ? null : r4(Math.max(a, b) / Math.min(a, b));
  };
  return { halves, halfGap: { eer: gap('eer'), fnmrAtFmr1e3: gap('fnmrAtFmr1e3') } };
}

/** The rates' thresholds turned back into iris distances (the rates read the negated distance). */
function irisThresholds(r: { thresholdAtFmr1e2: number | null; thresholdAtFmr1e3: number | null }) {
  return {
    thresholdAtFmr1e2: r.thresholdAtFmr1e2 === null ? null : r4(-r.thresholdAtFmr1e2),
    thresholdAtFmr1e3: r.thresholdAtFmr1e3 === null ? null : r4(-r.thresholdAtFmr1e3),
  };
}

/**
 * `asEnrolled`: the terminal's own protocol beside the pair-wise one. An enrolment stores
 * ENROLL_CAPTURES captures of an eye, asking again for a refused one (src/terminal/enroller.ts), and
 * an eye is decided by its best-scoring template (src/terminal/identifier.ts). So each eye's first
 * ENROLL_CAPTURES acquired captures, in impression order, are its gallery; each later capture is a
 * probe scored by its smallest distance to a gallery: its own eye's (genuine) and every other
 * eye's (impostor). A refused probe, or a probe of an eye with no acquired capture, is a
 * non-match. Eyes with no capture past the gallery serve only as impostor galleries.
 */
function asEnrolled(items: Extracted<IrisCode>[], keep: (i: number) => boolean, threshold: number) {
  const eyes = new Map<string, number[]>();
  items.forEach((it, i) => {
    if (keep(i)) eyes.set(it.sample.subject, [...(eyes.get(it.sample.subject) ?? []), i]);
  });
  const byImpression = (a: number, b: number) =>
    items[a]!.sample.impression.localeCompare(items[b]!.sample.impression, 'en', { numeric: true });
  const enrolled = [...eyes].map(([eye, all]) => {
    const acquired = all.filter((i) => items[i]!.ok).sort(byImpression);
    const gallery = acquired.slice(0, ENROLL_CAPTURES);
    const last = gallery.length ? gallery[gallery.length - 1]! : -1;
    // Probes: every capture after the gallery's last one in impression order (refused ones too).
    const probes = all.filter((i) => !gallery.includes(i) && (last < 0 || byImpression(i, last) > 0)).sort(byImpression);
    return { eye, gallery, probes };
  });
  const best = (probe: number, gallery: number[]) => {
    const p = items[probe]!.ok;
    if (!p || !gallery.length) return -Infinity;
    return -Math.min(...gallery.map((g) => compareIrisCodes(p, items[g]!.ok!, { shiftRange: defaults.irisShiftRange }).hd));
  };
  const p: PairScores = { gen: [], imp: [], genPairs: [], impPairs: [] };
  // Open set: each probe searched as the terminal searches, its own eye enrolled (it must come out
  // as that eye) and not enrolled (a stranger: it must come out as nobody).
  const templates = enrolled.reduce((n, e) => n + e.gallery.length, 0);
  const searches: { probe: string; own: number; other: number; othersTemplates: number }[] = [];
  for (const e of enrolled)
    for (const probe of e.probes) {
      const own = best(probe, e.gallery);
      p.gen.push(own);
      let other = -Infinity;
      for (const o of enrolled)
        if (o !== e && o.gallery.length) {
          const s = best(probe, o.gallery);
          p.imp.push(s);
          other = Math.max(other, s);
        }
      searches.push({
        probe: basename(items[probe]!.sample.file),
        own: -own,
        other: -other,
        othersTemplates: templates - e.gallery.length,
      });
    }
  const { genuinePairs, impostorPairs, ...r } = rates(p, -threshold);
  return {
    galleryCaptures: ENROLL_CAPTURES,
    eyes: enrolled.length,
    probes: genuinePairs,
    impostorComparisons: impostorPairs,
    ...r,
    ...irisThresholds(r),
    openSet: openSet(searches, templates, threshold),
  };
}

/**
 * `asEnrolled.openSet`: the 1:N decision on each probe, at the fixed threshold (`fixed`: the best
 * template at or under it, whatever the gallery's size) and as the terminal decides (`bySize`:
 * irisIdentificationThreshold for the gallery's size). FNIR: probes of an enrolled eye not accepted
 * as that eye (refused, or taken for another); FPIR: the same probes with their own eye left out of
 * the gallery, taken for somebody. `fnirIfTemplates`: the FNIR these probes would have at the
 * distance a gallery of 100, 1,000 or 10,000 templates allows.
 */
function openSet(searches: { probe: string; own: number; other: number; othersTemplates: number }[], templates: number, threshold: number) {
  // Not accepted as its own eye at distance t: too far, or another eye closer.
  const notAccepted = (s: { own: number; other: number }, t: number) => !(s.own <= t && s.own <= s.other);
  const rule = (limit: (n: number) => number) => {
    const refused = searches.filter((s) => notAccepted(s, limit(templates)));
    const strangers = searches.filter((s) => s.other <= limit(s.othersTemplates));
    const share = (k: number) => (searches.length ? r4(k / searches.length) : null);
    return {
      threshold: r4(limit(templates)),
      fnir: share(refused.length),
      fpir: share(strangers.length),
      notAccepted: refused.map((s) => `${s.probe} ${r4(s.own)}`),
      strangersTaken: strangers.map((s) => `${s.probe} ${r4(s.other)}`),
    };
  };
  // What a larger site's gallery would cost these probes: the FNIR at the distance its size allows
  // (the probes' own distances from this half's galleries; a larger gallery's strangers are not here).
  const atSize = Object.fromEntries(
    [100, 1_000, 10_000].map((n) => {
      const t = irisIdentificationThreshold(threshold, n);
      const refused = searches.filter((s) => notAccepted(s, t)).length;
      return [n, { threshold: r4(t), fnir: searches.length ? r4(refused / searches.length) : null }];
    }),
  );
  return {
    templates,
    searches: searches.length,
    fixed: rule(() => threshold),
    bySize: rule((n) => irisIdentificationThreshold(threshold, n)),
    fnirIfTemplates: atSize,
  };
}

async function fingerBench(dir: string, dpiFlag?: number, degrade = false) {
  const { samples: good, half } = folderSamples(dir);
  // --degrade: beside each image a poor capture of the same finger (src/synthetic/poor-capture.ts), the kinds in turn.
  const samples = degrade
    ? [
        ...good,
        ...good.map((s, i) => ({
          ...s,
          impression: `${s.impression}~${DEGRADATIONS[i % DEGRADATIONS.length]}`,
          degrade: DEGRADATIONS[i % DEGRADATIONS.length]!,
        })),
      ]
    : good;
  log(`fingers: ${samples.length} images in ${dir}${degrade ? ' (half of them made poor)' : ''}`);
  const { items, dpiAssumed } = await extractAll(samples, 'finger', (b) => prepareFinger(decodeFingerTemplate(b)), dpiFlag);
  const probes = items.map((i) => (i.ok ? new FingerProbe(i.ok) : null));
  const t0 = performance.now();
  const all = allPairs<PreparedFinger>(items, (_a, b, ia) => compareProbe(probes[ia]!, b));
  const compareMs = performance.now() - t0;
  const threshold = defaults.fingerThreshold;
  const figures = (keep: (i: number) => boolean, subset: Extracted<PreparedFinger>[]) => {
    const p = subsetPairs(all, keep);
    const fails = failures(subset);
    const r = rates(p, threshold);
    const fte = fails.length / subset.length;
    return {
      fte: r4(fte),
      failures: fails,
      threshold,
      ...r,
      meanMinutiae: r1(
        subset.filter((i) => i.ok).reduce((s, i) => s + i.ok!.data[i.ok!.offset]!, 0) / Math.max(1, subset.filter((i) => i.ok).length),
      ),
      quality: qualityReport(items, p, r.thresholdAtFmr1e3 ?? threshold, keep),
      ...(worstN ? { worst: worstPairs(items, p, worstN, 1) } : {}),
      ...(degrade ? { byCapture: byCapture(items, p, threshold) } : {}),
      ratios: {
        eer: r.eer === null ? null : r4(r.eer / FINGER_FLOOR.eer),
        fnmrAtFmr1e3: r.fnmrAtFmr1e3 === null ? null : r4(r.fnmrAtFmr1e3 / FINGER_FLOOR.fnmrAtFmr1e3),
        fte: fte === 0 ? 0 : null,
      },
    };
  };
  return {
    dir: resolve(dir),
    images: items.length,
    subjects: new Set(samples.map((s) => s.subject)).size,
    ...(onlyHalf ? { onlyHalf } : {}),
    dpi: dpiFlag ?? 'from each image (500 where it carries none)',
    dpiAssumed,
    ...figures(() => true, items),
    ...timing(items),
    comparisonsPerSec: Math.round(((all.gen.length + all.imp.length) / compareMs) * 1000),
    floor: FINGER_FLOOR,
    ...byHalf(items as Extracted<unknown>[], half, (keep, subset) => figures(keep, subset as Extracted<PreparedFinger>[])),
  };
}

/** Each half's impostor distances, pooled over the iris folders given (irisChanceTail). */
type ImpostorPool = Record<Half, number[]>;

/**
 * `irisChanceTail`: the chance tail of one comparison of two different eyes, pooled over the tuning
 * halves of every iris folder given: log10 of the share at or under a distance, fitted by least
 * squares as a line in the distance over the tail the pairs can resolve (from FMR 1e-2 down to the
 * fifth smallest distance), read at the default threshold. IRIS_CHANCE_TAIL in iris-decision.ts
 * holds the figures the terminal decides with, printed beside it. `reportingHalves` checks that
 * line on the pairs nothing was fitted on: their measured share at or under 0.32, 0.34 and 0.36
 * beside the line's (irisChanceFmr).
 */
function chanceTail(hd: number[], held: number[]) {
  const s = [...hd].sort((a, b) => a - b);
  const n = s.length;
  const points: [number, number][] = [];
  for (let rank = 5; rank <= 0.01 * n; rank = Math.max(rank + 1, Math.round(rank * 1.25)))
    points.push([s[rank - 1]!, Math.log10(rank / n)]);
  if (points.length < 3) return { impostors: n, resolved: false };
  const mx = points.reduce((a, p) => a + p[0], 0) / points.length;
  const my = points.reduce((a, p) => a + p[1], 0) / points.length;
  const slope = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0) / points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  const at = IRIS_CHANCE_TAIL.hd;
  return {
    impostors: n,
    resolved: true,
    fittedFrom: {
      fmr: [r4(10 ** points[0]![1]), r4(10 ** points[points.length - 1]![1])],
      hd: [r4(points[0]![0]), r4(points[points.length - 1]![0])],
    },
    hd: at,
    log10Fmr: r4(my + slope * (at - mx)),
    perDecade: r4(slope),
    measuredFmrAtHd: r4(s.filter((x) => x <= at).length / n),
    inCode: IRIS_CHANCE_TAIL,
    reportingHalves: {
      impostors: held.length,
      at: [0.32, 0.34, 0.36].map((t) => ({
        hd: t,
        measured: held.length ? Number((held.filter((x) => x <= t).length / held.length).toExponential(2)) : null,
        line: Number(irisChanceFmr(t).toExponential(2)),
      })),
    },
  };
}

async function irisBench(dir: string, pool: ImpostorPool) {
  const { samples, half } = folderSamples(dir);
  log(`iris: ${samples.length} images in ${dir}`);
  const { items } = await extractAll<IrisCode>(samples, 'iris', decodeIrisTemplate);
  // Normalised distance (negated: higher is better for the rates) and the raw one of every pair.
  const rawOf = new Map<string, number>();
  const all = allPairs<IrisCode>(items, (a, b, ia, ib) => {
    const s = compareIrisCodes(a, b, { shiftRange: defaults.irisShiftRange });
    rawOf.set(`${ia},${ib}`, s.hdRaw);
    return -s.hd;
  });
  const threshold = defaults.irisThreshold;
  for (const h of ['tune', 'report'] as const)
    pool[h].push(
      ...subsetPairs(all, (i) => half.get(items[i]!.sample.subject) === h)
        .imp.filter(Number.isFinite)
        .map((x) => -x),
    );
  const dist = (v: number[], sign = -1) => {
    const s = v
      .filter(Number.isFinite)
      .map((x) => sign * x)
      .sort((a, b) => a - b);
    return { min: r4(s[0] ?? NaN), median: r4(quantile(s, 0.5)), max: r4(s[s.length - 1] ?? NaN) };
  };
  const figures = (keep: (i: number) => boolean, subset: Extracted<IrisCode>[]) => {
    const p = subsetPairs(all, keep);
    const fails = failures(subset);
    const r = rates(p, -threshold);
    const fta = fails.length / subset.length;
    // The same rates over the pairs of acquired images only (how the shared README's reference
    // figures of other systems are counted: failures left out of the pairs).
    const acquired = rates({ ...p, gen: p.gen.filter(Number.isFinite), imp: p.imp.filter(Number.isFinite) }, -threshold);
    return {
      fta: r4(fta),
      // The key list names fte for every modality: each image is one attempt here, so the
      // failures to enrol and to acquire are the same count.
      fte: r4(fta),
      failures: fails,
      threshold,
      ...r,
      ...irisThresholds(r),
      acquiredOnly: { eer: acquired.eer, fnmrAtFmr1e2: acquired.fnmrAtFmr1e2, fnmrAtFmr1e3: acquired.fnmrAtFmr1e3 },
      genuineHd: dist(p.gen),
      impostorHd: dist(p.imp),
      genuineHdRaw: dist(
        p.genPairs.map(([a, b]) => rawOf.get(`${a},${b}`) ?? NaN),
        1,
      ),
      quality: qualityReport(items, p, -threshold, keep),
      asEnrolled: asEnrolled(items, keep, threshold),
      ...(worstN ? { worst: worstPairs(items, p, worstN, -1) } : {}),
      ratios: { fta: r4(fta / IRIS_FLOOR.fta), eer: r.eer === null ? null : r4(r.eer / IRIS_FLOOR.eer) },
    };
  };
  return {
    dir: resolve(dir),
    images: items.length,
    subjects: new Set(samples.map((s) => s.subject)).size,
    ...(onlyHalf ? { onlyHalf } : {}),
    ...figures(() => true, items),
    ...timing(items),
    floor: IRIS_FLOOR,
    ...byHalf(items as Extracted<unknown>[], half, (keep, subset) => figures(keep, subset as Extracted<IrisCode>[])),
  };
}

const loadBefore = loadavg();
const out: Record<string, unknown> = {};
if (values.fingers?.length) {
  const dpi = values.dpi !== undefined ? Number(values.dpi) : undefined;
  if (dpi !== undefined && !(dpi >= 100 && dpi <= 2000)) {
    process.stderr.write(`--dpi ${values.dpi}: give 100..2000\n`);
    process.exit(2);
  }
  // One folder: its figures under `finger` (as before); several: keyed by folder name.
  const sets: Record<string, unknown> = {},
    poor: Record<string, unknown> = {};
  for (const dir of values.fingers) {
    sets[basename(resolve(dir))] = await fingerBench(dir, dpi);
    if (values.degrade) poor[basename(resolve(dir))] = await fingerBench(dir, dpi, true);
  }
  const one = values.fingers.length === 1;
  out.finger = one ? Object.values(sets)[0] : sets;
  if (values.degrade) out.fingerWithPoorCaptures = one ? Object.values(poor)[0] : poor;
}
if (values.iris?.length) {
  const sets: Record<string, unknown> = {};
  const pool: ImpostorPool = { tune: [], report: [] };
  for (const dir of values.iris) sets[basename(resolve(dir))] = await irisBench(dir, pool);
  out.iris = sets;
  if (!onlyHalf) out.irisChanceTail = chanceTail(pool.tune, pool.report);
}
out.load = {
  before: loadBefore.map((x) => r1(x * 10) / 10),
  after: loadavg().map((x) => r1(x * 10) / 10),
  cores: (await import('node:os')).cpus().length,
};
out.note = 'extraction latency is in-process, single image, sequential, 1 inference thread, on a machine shared with other work (see load)';
process.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${JSON.stringify(out, null, 2)}\n`);
