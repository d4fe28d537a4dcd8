/**
 * `npm run bench:identify -- --gallery DIR --probes DIR [--json] [--dpi N] [--sizes 1000,3000,10000]
 *   [--person REGEX] [--fpir X] [--candidates N] [--limit N] [--daemon] [--dump FILE] [--fresh]
 *   [--same-person A,B,...]`
 *
 * 1:N identification on real captures, through the terminal's own path. Images are named
 * `<subject>_<impression>.(png|pgm)` (one subject = one finger). Persons are split by a hash of
 * their id, deterministically: a third are left out of the gallery (their probes are the non-mated
 * searches, strangers at the gate), and every person is in the `tune` or the `test` half (choose
 * parameters on `tune`, read `test`).
 *
 * 1. Every gallery image of an enrolled person is extracted (the same call as `edge-agent template
 *    extract`) and stored in a real encrypted template cache (SQLite, in a temporary folder); a
 *    refused image is a failure to enroll. Resolution: `--dpi N`, else the resolution the image
 *    states, as a scanner states its own (a terminal always knows its sensor's), else the
 *    pipeline's assumption (counted in `dpi`).
 * 2. The daemon's `Identifier` is built on that cache with the daemon's `FingerMatcher`, so the
 *    index is the daemon's, built the daemon's way and kept up to date from the cache's changes.
 *    Every probe is identified by `identifyPerson` (src/biometrics/finger) on that index: the
 *    prefilter, the matcher, fusion by person and the 1:N decision the terminal is to take
 *    (`--daemon` also runs `Identifier.identify`, today's decision: the best template at the
 *    configured threshold). Once the identifier calls identifyPerson itself, this bench calls the
 *    identifier alone.
 * 3. The gallery is then padded with synthetic fingers (src/synthetic/finger.ts templates, one
 *    finger per person, added to the same cache) up to each size of `--sizes`, and every probe is
 *    identified again: how each figure changes with N. A size below the real gallery is measured
 *    at the real gallery's size. Padding templates come from our own generator, not from images:
 *    the output says how many there are.
 *
 * Per size, for all persons and per half: mated probes (their finger enrolled): rank-1 (the right
 * person first), prefilter recall (the finger's template among those the full matcher compared),
 * FNIR at FPIR 1e-2 and 1e-3 over the decision's confidence (null when too few non-mated probes
 * resolve it), FNIR and FPIR at the configured decision, how often it asked for a second finger and
 * what the second finger (another finger of the same person) decided on the daemon's own path
 * (`identifyAmong`, as FingerMatcher.decideAmong calls it: both fingers fused among the two persons
 * the first named, under the policy's second-finger share and floor); p50/p95 per identification,
 * wall clock and CPU time, and the load average. A probe that fails to extract is counted in
 * `fta` and, as the terminal would see it, in `fnirWithFta`.
 *
 * Extraction results are cached between runs (extraction-cache.ts: a temporary folder keyed by the
 * image's bytes and the pipeline's source; `--fresh` extracts everything again), so a run after the
 * first measures identification without paying again for thousands of extractions. `--dump FILE`
 * writes one JSON line per search (the best persons' scores, best first, and which is the probe's
 * person; after a second finger, each of the two persons' fused score and the second capture's own
 * score), to calibrate the decision offline; `--second-share X` and `--second-floor X|off` override
 * the policy's secondFingerShare and secondFingerFloor. `--same-person A,B,…` (repeatable) counts the ids
 * as one person, for a dataset that files one person twice: in SOCOFing, person 596's probes score
 * 100–230 against persons 590 and 598 (other strangers: at most 95; mates: 100 to 1,000), and
 * 590 lacks the four fingers the data's README left out as byte-identical to another person's.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigSchema } from '../../src/config/config.js';
import { extractTemplate } from '../../src/biometrics/extract/extract-image.js';
import { decodeImage } from '../../src/biometrics/image/decode-image.js';
import { decodeFingerTemplate, encodeIso19794_2 } from '../../src/biometrics/finger/iso19794-2.js';
import type { FingerTemplate } from '../../src/biometrics/finger/template.js';
import { DEFAULT_FINGER_DECISION, type FingerDecisionPolicy } from '../../src/biometrics/finger/decision.js';
import {
  identifyAmong,
  identifyPerson,
  secondFingerBetween,
  type PersonGallery,
  type PersonIdentification,
} from '../../src/biometrics/finger/identify-person.js';
import { PersonDirectory } from '../../src/biometrics/finger/person-directory.js';
import { FingerMatcher } from '../../src/biometrics/matchers/finger-matcher.js';
import { Identifier } from '../../src/terminal/identifier.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache, type NewTemplate, type StoredTemplate } from '../../src/store/template-cache.js';
import { toAgentError } from '../../src/core/errors.js';
import { impression, impressionTemplate, syntheticFinger } from '../../src/synthetic/finger.js';
import { fnmrAtFmr, sortedScores } from './error-rates.js';
import { ExtractionCache, type CachedExtraction } from './extraction-cache.js';
import { percentile, round } from './proc-sample.js';

const { values } = parseArgs({
  options: {
    gallery: { type: 'string' },
    probes: { type: 'string' },
    json: { type: 'boolean' },
    dpi: { type: 'string' },
    sizes: { type: 'string' },
    person: { type: 'string' },
    fpir: { type: 'string' },
    candidates: { type: 'string' },
    limit: { type: 'string' },
    daemon: { type: 'boolean' },
    dump: { type: 'string' },
    fresh: { type: 'boolean' },
    'same-person': { type: 'string', multiple: true },
    'second-share': { type: 'string' },
    'second-floor': { type: 'string' },
  },
  strict: true,
});
if (!values.gallery || !values.probes) {
  process.stderr.write(
    'usage: npm run bench:identify -- --gallery DIR --probes DIR [--json] [--dpi N] [--sizes 1000,3000,10000] [--person REGEX] [--fpir X] [--candidates N] [--limit N] [--daemon] [--dump FILE] [--fresh] [--same-person A,B,...] [--second-share X] [--second-floor X|off]\n',
  );
  process.exit(2);
}
const log = (m: string) => process.stderr.write(`${m}\n`);
if (values.dump) writeFileSync(values.dump, '');

const config = ConfigSchema.parse({}).biometrics as { fingerThreshold: number; irisThreshold: number; irisShiftRange: number };
const policy: FingerDecisionPolicy = {
  ...DEFAULT_FINGER_DECISION,
  threshold: config.fingerThreshold,
  ...(values.fpir ? { fpir: Number(values.fpir) } : {}),
  ...(values['second-share'] ? { secondFingerShare: Number(values['second-share']) } : {}),
  ...(values['second-floor'] ? { secondFingerFloor: values['second-floor'] === 'off' ? undefined : Number(values['second-floor']) } : {}),
};
const sizes = (values.sizes ?? '1000,3000,10000').split(',').map(Number);
const candidates = values.candidates ? Number(values.candidates) : undefined;
const dpiFlag = values.dpi ? Number(values.dpi) : undefined;

// ---- images, persons, the split ---------------------------------------------------------------

interface Image {
  file: string;
  name: string;
  /** One finger. */
  subject: string;
  person: string;
  position: string;
}

/** SOCOFing's `PPPGHF`: person, gender, hand (L/R), finger (t i m r l). */
const SOCOFING = /^(\d+)[MF]([LR])([timrl])$/;
const FINGERS: Record<string, string> = { t: 'thumb', i: 'index', m: 'middle', r: 'ring', l: 'little' };

/** `--same-person A,B,…`: ids the dataset files one person under (each becomes A). */
const samePerson = new Map<string, string>();
for (const group of values['same-person'] ?? []) {
  const ids = group
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const id of ids) samePerson.set(id, ids[0]!);
}

function ownerOfSubject(subject: string, pattern: RegExp | null): { person: string; position: string } {
  const owner = (): { person: string; position: string } => {
    if (pattern) {
      const m = pattern.exec(subject);
      return { person: m?.[1] ?? subject, position: subject };
    }
    const s = SOCOFING.exec(subject);
    if (s) return { person: s[1]!, position: `${s[2] === 'L' ? 'left' : 'right'}-${FINGERS[s[3]!]}` };
    return { person: subject, position: 'finger' };
  };
  const o = owner();
  return { ...o, person: samePerson.get(o.person) ?? o.person };
}

function listImages(dir: string, pattern: RegExp | null): Image[] {
  if (!existsSync(dir)) {
    process.stderr.write(`${dir}: no such folder (give the folder of <subject>_<impression>.png images)\n`);
    process.exit(2);
  }
  const out: Image[] = [];
  for (const file of readdirSync(dir).sort()) {
    const m = /^(.+)_([^_]+)\.(png|pgm)$/i.exec(file);
    if (!m) continue;
    out.push({ file: join(dir, file), name: basename(file), subject: m[1]!, ...ownerOfSubject(m[1]!, pattern) });
  }
  if (!out.length) throw new Error(`${dir}: no <subject>_<impression>.png|pgm images`);
  return out;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
const half = (person: string): 'tune' | 'test' => (fnv1a(person) & 1 ? 'test' : 'tune');
const leftOut = (person: string): boolean => (fnv1a(person) >>> 1) % 3 === 0;

// ---- extraction -------------------------------------------------------------------------------

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const dpiSources: Record<string, number> = {};

const extractions = values.fresh ? null : new ExtractionCache();

async function extractOnce(bytes: Uint8Array): Promise<CachedExtraction> {
  try {
    const read = decodeImage(bytes);
    const dpi = dpiFlag ?? read.dpi;
    const r = await extractTemplate({ modality: 'finger', image: read, ...(dpi ? { finger: { dpi } } : {}) });
    return { bytes: r.template, quality: r.quality, dpiSource: dpiFlag ? 'flag' : read.dpi ? 'image' : (r.dpiSource ?? 'assumed') };
  } catch (err) {
    const e = toAgentError(err);
    return { failure: `${e.code}: ${e.message}` };
  }
}

async function extract(image: Image): Promise<CachedExtraction> {
  const bytes = readFileSync(image.file);
  const r = extractions ? await extractions.get(bytes, dpiFlag, () => extractOnce(bytes)) : await extractOnce(bytes);
  if (!('failure' in r)) dpiSources[r.dpiSource] = (dpiSources[r.dpiSource] ?? 0) + 1;
  return r;
}

// ---- measures ---------------------------------------------------------------------------------

interface Probe {
  image: Image;
  template: FingerTemplate | null;
  failure?: string;
  /** 'mated': the finger is enrolled; 'non-mated': the person is left out; 'finger-not-enrolled': the person is, that finger failed to enroll. */
  kind: 'mated' | 'non-mated' | 'finger-not-enrolled';
}

interface Outcome {
  probe: Probe;
  r: PersonIdentification;
  /** The finger's template was among those the full matcher compared. */
  inCandidates: boolean;
  wallMs: number;
  cpuMs: number;
  second: PersonIdentification | null;
  daemon: { accepted: boolean; employeeCode: string | null } | null;
}

/** The decision's statistic for sweeps: its confidence, when the best person clears the floor. */
const statistic = (r: PersonIdentification): number =>
  (r.candidates[0]?.score ?? Number.NEGATIVE_INFINITY) >= policy.threshold ? r.confidence : Number.NEGATIVE_INFINITY;

function summarize(outcomes: Outcome[], fta: { mated: number; nonMated: number }) {
  const mated = outcomes.filter((o) => o.probe.kind === 'mated');
  const non = outcomes.filter((o) => o.probe.kind === 'non-mated');
  const right = (o: Outcome, r: PersonIdentification | null = o.r) => r?.decision === 'accept' && r.person === o.probe.image.person;
  const gen = sortedScores(
    mated.map((o) => (o.r.candidates[0]?.person === o.probe.image.person ? statistic(o.r) : Number.NEGATIVE_INFINITY)),
  );
  const imp = sortedScores(non.map((o) => statistic(o.r)));
  const at = (fpir: number) => {
    const p = fnmrAtFmr(gen, imp, fpir);
    return p.resolved ? round(p.fnmr!, 4) : null;
  };
  const askedM = mated.filter((o) => o.second);
  const askedN = non.filter((o) => o.second);
  const acceptedNon = non.filter((o) => o.r.decision === 'accept');
  const fnirAtPolicy = mated.length ? mated.filter((o) => !right(o)).length / mated.length : null;
  return {
    mated: {
      probes: mated.length,
      rank1: mated.length ? round(mated.filter((o) => o.r.candidates[0]?.person === o.probe.image.person).length / mated.length, 4) : null,
      prefilterRecall: mated.length ? round(mated.filter((o) => o.inCandidates).length / mated.length, 4) : null,
      fnirAtFpir1e2: at(1e-2),
      fnirAtFpir1e3: at(1e-3),
      fnirAtPolicy: fnirAtPolicy === null ? null : round(fnirAtPolicy, 4),
      fnirWithFta:
        mated.length + fta.mated ? round((mated.filter((o) => !right(o)).length + fta.mated) / (mated.length + fta.mated), 4) : null,
      wrongPersonAccepted: mated.filter((o) => o.r.decision === 'accept' && !right(o)).length,
      askedSecondFinger: askedM.length,
      afterSecondFinger: {
        accepted: askedM.filter((o) => right(o, o.second)).length,
        wrongPerson: askedM.filter((o) => o.second?.decision === 'accept' && !right(o, o.second)).length,
        rejected: askedM.filter((o) => o.second?.decision !== 'accept').length,
      },
      fnirWithSecondFinger: mated.length
        ? round(mated.filter((o) => !(right(o) || (o.second !== null && right(o, o.second)))).length / mated.length, 4)
        : null,
      ...(mated.some((o) => o.daemon)
        ? {
            daemonTodayFnir: round(
              mated.filter((o) => !(o.daemon?.accepted && o.daemon.employeeCode === o.probe.image.person)).length / mated.length,
              4,
            ),
          }
        : {}),
    },
    nonMated: {
      probes: non.length,
      fpirAtPolicy: non.length ? round(acceptedNon.length / non.length, 4) : null,
      askedSecondFinger: askedN.length,
      acceptedAfterSecondFinger: askedN.filter((o) => o.second?.decision === 'accept').length,
      fpirWithSecondFinger: non.length
        ? round(non.filter((o) => o.r.decision === 'accept' || o.second?.decision === 'accept').length / non.length, 4)
        : null,
      falseAccepts: acceptedNon
        .sort((a, b) => b.r.confidence - a.r.confidence)
        .slice(0, 8)
        .map((o) => ({
          probe: o.probe.image.name,
          as: o.r.person,
          score: round(o.r.candidates[0]!.score, 1),
          confidence: round(o.r.confidence, 1),
        })),
      ...(non.some((o) => o.daemon) ? { daemonTodayFpir: round(non.filter((o) => o.daemon?.accepted).length / non.length, 4) } : {}),
    },
    ftaProbes: fta,
  };
}

// ---- the run ----------------------------------------------------------------------------------

const pattern = values.person ? new RegExp(values.person) : null;
const galleryImages = listImages(resolve(values.gallery), pattern);
let probeImages = listImages(resolve(values.probes), pattern);
if (values.limit) {
  const limit = Number(values.limit);
  probeImages = probeImages.filter((_, i) => i % Math.max(1, Math.ceil(probeImages.length / limit)) === 0);
}
const persons = [...new Set(galleryImages.map((g) => g.person))];
log(`${galleryImages.length} gallery images of ${persons.length} persons, ${probeImages.length} probes`);

const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-identify-'));
const db = await openAgentDatabase(dir);
let identifier: Identifier | null = null;
try {
  const cache = await TemplateCache.open(db, { key: randomBytes(32) });
  const directory = new PersonDirectory();
  const own = (t: StoredTemplate | { id: string; employeeCode: string; position: string }) =>
    directory.add(t.id, { person: t.employeeCode, position: t.position });
  cache.on('added', own);
  cache.on('removed', (r: { id: string }) => directory.remove(r.id));

  // 1. enroll the gallery (persons not left out)
  const enrolledSubjects = new Map<string, string>();
  const fte: Array<{ image: string; reason: string }> = [];
  let batch: NewTemplate[] = [];
  const t0 = performance.now();
  for (const g of galleryImages) {
    if (leftOut(g.person)) continue;
    const r = await extract(g);
    if ('failure' in r) {
      fte.push({ image: g.name, reason: r.failure });
      continue;
    }
    const id = `g-${g.subject}-${enrolledSubjects.size}`;
    enrolledSubjects.set(g.subject, id);
    batch.push({
      id,
      employeeCode: g.person,
      modality: 'finger',
      position: g.position,
      format: 'iso19794-2',
      data: r.bytes,
      quality: r.quality,
    });
    if (batch.length === 200) {
      await cache.addTemplates(batch);
      batch = [];
    }
  }
  if (batch.length) await cache.addTemplates(batch);
  const enrollMs = Math.round(performance.now() - t0);
  log(`enrolled ${enrolledSubjects.size} fingers (${fte.length} refused) in ${enrollMs} ms`);

  // 2. the probes
  const probes: Probe[] = [];
  const ftaList: Array<{ image: string; reason: string; kind: Probe['kind']; half: 'tune' | 'test' }> = [];
  for (const p of probeImages) {
    const kind: Probe['kind'] = leftOut(p.person) ? 'non-mated' : enrolledSubjects.has(p.subject) ? 'mated' : 'finger-not-enrolled';
    const r = await extract(p);
    if ('failure' in r) {
      ftaList.push({ image: p.name, reason: r.failure, kind, half: half(p.person) });
      probes.push({ image: p, template: null, failure: r.failure, kind });
    } else probes.push({ image: p, template: decodeFingerTemplate(r.bytes), kind });
  }
  log(`extracted ${probes.length} probes (${ftaList.length} refused)`);

  // 3. the daemon's identifier on that cache
  const matcher = new FingerMatcher(config.fingerThreshold);
  identifier = await Identifier.build(cache, { biometrics: config, matchers: [matcher] });
  const gallery: PersonGallery = {
    index: matcher.index,
    ownerOf: (id) => directory.ownerOf(id),
    templatesOf: (person) => directory.templatesOf(person),
  };
  const real = matcher.index.size;

  /** Another finger of the same person, for the second-finger step. */
  const companion = (p: Probe): Probe | null =>
    probes.find(
      (q) =>
        q.template !== null &&
        q.image.person === p.image.person &&
        q.image.subject !== p.image.subject &&
        (p.kind !== 'mated' || q.kind === 'mated'),
    ) ?? null;

  const points: Array<Record<string, unknown>> = [];
  let padded = 0;
  for (const requested of sizes) {
    const target = Math.max(requested, real);
    if (points.some((p) => p.n === target)) continue;
    // pad with synthetic fingers, one per synthetic person, through the cache (the identifier follows it)
    let pad: NewTemplate[] = [];
    while (real + padded < target) {
      const t = impressionTemplate(impression(syntheticFinger(8_000_000 + padded), 0));
      pad.push({
        employeeCode: `SYN${padded}`,
        modality: 'finger',
        position: 'right-index',
        format: 'iso19794-2',
        data: encodeIso19794_2(t),
      });
      padded++;
      if (pad.length === 1000) {
        await cache.addTemplates(pad);
        pad = [];
      }
    }
    if (pad.length) await cache.addTemplates(pad);
    log(`N = ${matcher.index.size} (${real} real, ${padded} synthetic): identifying ${probes.length} probes`);
    const outcomes: Outcome[] = [];
    for (const p of probes) {
      if (!p.template || p.kind === 'finger-not-enrolled') continue;
      const mate = enrolledSubjects.get(p.image.subject);
      let inCandidates = false;
      const c0 = cpuMs();
      const w0 = performance.now();
      const r = identifyPerson(p.template, gallery, policy, {
        ...(candidates ? { candidates } : {}),
        ...(values.dump ? { keep: 40 } : {}),
        onSearch: (_, compared) => {
          inCandidates = mate !== undefined && compared.some((c) => c.id === mate);
        },
      });
      const wallMs = performance.now() - w0;
      const cpu = cpuMs() - c0;
      let second: PersonIdentification | null = null;
      if (r.decision === 'ask-second-finger') {
        const q = companion(p);
        // the daemon's own step (FingerMatcher.decideAmong): both fingers fused among the persons the first one named
        if (q?.template)
          second = identifyAmong([p.template, q.template], gallery, secondFingerBetween(r), policy, candidates ? { candidates } : {});
      }
      let daemon: Outcome['daemon'] = null;
      if (values.daemon) {
        const d = await identifier.identify({ modality: 'finger', template: p.template });
        daemon = { accepted: d.decision === 'accept', employeeCode: d.employeeCode };
      }
      outcomes.push({ probe: p, r, inCandidates, wallMs, cpuMs: cpu, second, daemon });
      if (values.dump) {
        // one row per search, for calibrating the decision offline: the best persons' scores and whether each is the probe's person
        const row = {
          n: matcher.index.size,
          probe: p.image.name,
          kind: p.kind,
          half: half(p.image.person),
          minutiae: p.template.minutiae.length,
          persons: r.candidates.map((c) => [round(c.score, 2), c.person === p.image.person ? 1 : 0]),
          // the second-finger step: per person among the two, [fused score, second capture's own score, is the probe's person]
          ...(second
            ? {
                second: {
                  confidence: round(second.confidence, 2),
                  persons: second.candidates.map((c) => [
                    round(c.score, 2),
                    round(c.probes[1]?.score ?? 0, 2),
                    c.person === p.image.person ? 1 : 0,
                  ]),
                },
              }
            : {}),
        };
        appendFileSync(values.dump, `${JSON.stringify(row)}\n`);
      }
    }
    const fta = (h?: string) => ({
      mated: ftaList.filter((f) => f.kind === 'mated' && (!h || f.half === h)).length,
      nonMated: ftaList.filter((f) => f.kind === 'non-mated' && (!h || f.half === h)).length,
    });
    const walls = outcomes.map((o) => o.wallMs);
    const cpus = outcomes.map((o) => o.cpuMs);
    points.push({
      n: matcher.index.size,
      requested,
      real,
      synthetic: padded,
      ...summarize(outcomes, fta()),
      halves: {
        tune: summarize(
          outcomes.filter((o) => half(o.probe.image.person) === 'tune'),
          fta('tune'),
        ),
        test: summarize(
          outcomes.filter((o) => half(o.probe.image.person) === 'test'),
          fta('test'),
        ),
      },
      latency: {
        p50Ms: round(percentile(walls, 50) ?? 0, 2),
        p95Ms: round(percentile(walls, 95) ?? 0, 2),
        cpuP50Ms: round(percentile(cpus, 50) ?? 0, 2),
        cpuP95Ms: round(percentile(cpus, 95) ?? 0, 2),
        loadAverage: loadavg().map((x) => round(x, 2)),
      },
    });
    // each size as soon as it is measured, so a run stopped early still says what it found
    log(`N = ${matcher.index.size}: ${JSON.stringify(points[points.length - 1])}`);
  }

  const result = {
    gallery: {
      dir: values.gallery,
      images: galleryImages.length,
      persons: persons.length,
      personsLeftOut: persons.filter(leftOut).length,
      enrolledFingers: real,
      failedToEnroll: fte.length,
      failures: fte.slice(0, 10),
      enrollMs,
    },
    probes: {
      dir: values.probes,
      images: probeImages.length,
      mated: probes.filter((p) => p.kind === 'mated').length,
      nonMated: probes.filter((p) => p.kind === 'non-mated').length,
      fingerNotEnrolled: probes.filter((p) => p.kind === 'finger-not-enrolled').length,
      failedToExtract: ftaList.length,
      failures: ftaList.slice(0, 10).map(({ image, reason }) => ({ image, reason })),
    },
    dpi: dpiSources,
    extractionCache: extractions ? { dir: extractions.dir, hits: extractions.hits, misses: extractions.misses } : 'off (--fresh)',
    samePerson: Object.fromEntries(samePerson),
    split:
      'by person: FNV-1a of the person id; bit 0 chooses the half (tune/test), a third of the persons ((hash >> 1) % 3 = 0) are left out of the gallery',
    padding: `synthetic fingers from src/synthetic/finger.ts (templates, not images; 500 dpi, one finger per person), ${padded} at the largest size`,
    policy,
    candidates: candidates ?? 'index default',
    sizes: points,
    loadAverage: loadavg().map((x) => round(x, 2)),
  };
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await identifier?.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
