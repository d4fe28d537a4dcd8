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
 * error-versus-reject curve (FNMR after refusing the worst 0/5/10/20 % of captures).
 *
 * `--degrade` adds `fingerWithPoorCaptures`: the finger folder again with, beside every image, a
 * poor capture of the same finger made from it (faint, smudged, partial or dry in turn, see
 * src/synthetic/poor-capture.ts), and `byCapture`: per kind its quality and refusals and the share of the false
 * non-matches at the threshold it carries. A real set of good captures has too few errors to show
 * where they come from; this shows whether the quality score points at the captures that cause them.
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
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';
import { toAgentError } from '../../src/core/errors.js';
import { DEGRADATIONS, degradeFinger, type Degradation } from '../../src/synthetic/poor-capture.js';
import { equalErrorRate, fnmrAtFmr, nextUp, quantile, ratesAt, sortedScores } from './error-rates.js';

const { values } = parseArgs({
  options: {
    fingers: { type: 'string' },
    dpi: { type: 'string' },
    iris: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    degrade: { type: 'boolean' },
  },
  strict: true,
});
if (!values.fingers && !values.iris?.length) {
  process.stderr.write('usage: npm run bench:real -- --fingers DIR [--dpi N] --iris DIR [--iris DIR2] [--degrade] [--json]\n');
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

/** `<subject>_<impression>.(png|pgm)`: the subject is everything before the last underscore. */
function listSamples(dir: string): Sample[] {
  const out: Sample[] = [];
  for (const file of readdirSync(dir).sort()) {
    const m = /^(.+)_([^_]+)\.(png|pgm)$/i.exec(file);
    if (m) out.push({ file: join(dir, file), subject: m[1]!, impression: m[2]! });
  }
  if (!out.length) throw new Error(`${dir}: no <subject>_<impression>.png|pgm images`);
  return out;
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

/** Every genuine and cross-subject impostor pair once (a < b); a refused image scores -Infinity. */
function allPairs<T>(items: Extracted<T>[], score: (a: T, b: T, ia: number, ib: number) => number): PairScores {
  const out: PairScores = { gen: [], imp: [], genPairs: [], impPairs: [] };
  for (let a = 0; a < items.length; a++)
    for (let b = a + 1; b < items.length; b++) {
      const A = items[a]!,
        B = items[b]!;
      const s = A.ok !== null && B.ok !== null ? score(A.ok, B.ok, a, b) : -Infinity;
      if (A.sample.subject === B.sample.subject) {
        out.gen.push(s);
        out.genPairs.push([a, b]);
      } else {
        out.imp.push(s);
        out.impPairs.push([a, b]);
      }
    }
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

/** Does the quality score carry the errors? (see the module comment) */
function qualityReport<T>(items: Extracted<T>[], p: PairScores, threshold: number) {
  const q = items.map((i) => i.quality);
  const sortedQ = [...q].sort((a, b) => a - b);
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

function failures<T>(items: Extracted<T>[]) {
  return items.filter((i) => i.failure).map((i) => ({ file: basename(i.sample.file), ...i.failure! }));
}

async function fingerBench(dir: string, dpiFlag?: number, degrade = false) {
  const good = listSamples(dir);
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
  const p = allPairs<PreparedFinger>(items, (_a, b, ia) => compareProbe(probes[ia]!, b));
  const compareMs = performance.now() - t0;
  const threshold = defaults.fingerThreshold;
  const fails = failures(items);
  const r = rates(p, threshold);
  const fte = fails.length / items.length;
  return {
    dir: resolve(dir),
    images: items.length,
    subjects: new Set(samples.map((s) => s.subject)).size,
    dpi: dpiFlag ?? 'from each image (500 where it carries none)',
    dpiAssumed,
    fte: r4(fte),
    failures: fails,
    threshold,
    ...r,
    ...timing(items),
    comparisonsPerSec: Math.round(((p.gen.length + p.imp.length) / compareMs) * 1000),
    meanMinutiae: r1(
      items.filter((i) => i.ok).reduce((s, i) => s + i.ok!.data[i.ok!.offset]!, 0) / Math.max(1, items.filter((i) => i.ok).length),
    ),
    quality: qualityReport(items, p, r.thresholdAtFmr1e3 ?? threshold),
    ...(degrade ? { byCapture: byCapture(items, p, threshold) } : {}),
    floor: FINGER_FLOOR,
    ratios: {
      eer: r.eer === null ? null : r4(r.eer / FINGER_FLOOR.eer),
      fnmrAtFmr1e3: r.fnmrAtFmr1e3 === null ? null : r4(r.fnmrAtFmr1e3 / FINGER_FLOOR.fnmrAtFmr1e3),
      fte: fte === 0 ? 0 : null,
    },
  };
}

async function irisBench(dir: string) {
  const samples = listSamples(dir);
  log(`iris: ${samples.length} images in ${dir}`);
  const { items } = await extractAll<IrisCode>(samples, 'iris', decodeIrisTemplate);
  const raw: { gen: number[]; imp: number[] } = { gen: [], imp: [] };
  const p = allPairs<IrisCode>(items, (a, b) => {
    const s = compareIrisCodes(a, b, { shiftRange: defaults.irisShiftRange });
    return -s.hd;
  });
  // Raw (unnormalised) distances beside the normalised ones, for reading the separation.
  allPairs<IrisCode>(items, (a, b) => compareIrisCodes(a, b, { shiftRange: defaults.irisShiftRange }).hdRaw).gen.forEach((v) => {
    if (Number.isFinite(v)) raw.gen.push(v);
  });
  const threshold = defaults.irisThreshold;
  const fails = failures(items);
  const r = rates(p, -threshold);
  const fta = fails.length / items.length;
  const dist = (v: number[]) => {
    const s = v
      .filter(Number.isFinite)
      .map((x) => -x)
      .sort((a, b) => a - b);
    return { min: r4(s[0] ?? NaN), median: r4(quantile(s, 0.5)), max: r4(s[s.length - 1] ?? NaN) };
  };
  const rawSorted = raw.gen.sort((a, b) => a - b);
  return {
    dir: resolve(dir),
    images: items.length,
    subjects: new Set(samples.map((s) => s.subject)).size,
    fta: r4(fta),
    // The key list names fte for every modality: each image is one attempt here, so the
    // failures to enrol and to acquire are the same count.
    fte: r4(fta),
    failures: fails,
    threshold,
    ...r,
    thresholdAtFmr1e2: r.thresholdAtFmr1e2 === null ? null : r4(-r.thresholdAtFmr1e2),
    thresholdAtFmr1e3: r.thresholdAtFmr1e3 === null ? null : r4(-r.thresholdAtFmr1e3),
    genuineHd: dist(p.gen),
    impostorHd: dist(p.imp),
    genuineHdRaw: { min: r4(rawSorted[0] ?? NaN), median: r4(quantile(rawSorted, 0.5)), max: r4(rawSorted[rawSorted.length - 1] ?? NaN) },
    ...timing(items),
    quality: qualityReport(items, p, -threshold),
    floor: IRIS_FLOOR,
    ratios: { fta: r4(fta / IRIS_FLOOR.fta), eer: r.eer === null ? null : r4(r.eer / IRIS_FLOOR.eer) },
  };
}

const loadBefore = loadavg();
const out: Record<string, unknown> = {};
if (values.fingers) {
  const dpi = values.dpi !== undefined ? Number(values.dpi) : undefined;
  if (dpi !== undefined && !(dpi >= 100 && dpi <= 2000)) {
    process.stderr.write(`--dpi ${values.dpi}: give 100..2000\n`);
    process.exit(2);
  }
  out.finger = await fingerBench(values.fingers, dpi);
  if (values.degrade) out.fingerWithPoorCaptures = await fingerBench(values.fingers, dpi, true);
}
if (values.iris?.length) {
  const sets: Record<string, unknown> = {};
  for (const dir of values.iris) sets[basename(resolve(dir))] = await irisBench(dir);
  out.iris = sets;
}
out.load = {
  before: loadBefore.map((x) => r1(x * 10) / 10),
  after: loadavg().map((x) => r1(x * 10) / 10),
  cores: (await import('node:os')).cpus().length,
};
out.note = 'extraction latency is in-process, single image, sequential, 1 inference thread, on a machine shared with other work (see load)';
process.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${JSON.stringify(out, null, 2)}\n`);
