/**
 * Iris benchmark on synthetic codes (src/synthetic/iris-code.ts), FVC/NIST style:
 * 1:1 EER from genuine and impostor pairs, 1:N FNIR at FPIR 1 % from mated and non-mated
 * searches against a gallery of N eyes, identification latency p50/p95 (default path: worker
 * threads from 20,000 codes on), exact comparisons per second on one core, and the streaming
 * floor: the time one in-process pass takes to read the gallery's code and mask words once
 * (N × 512 bytes), measured before every search so both see the same load; `ratio` is the p95
 * of the searches over the median floor, `ratioP95ToFloorP95` the p95 over the floor's p95.
 */
import { loadavg } from 'node:os';
import { IrisIndex } from '../../src/biometrics/iris/iris-index.js';
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';
import { CODE_WORDS, codeWords, exactScore, prepareProbe, streamWords } from '../../src/biometrics/iris/iris-scan.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../src/synthetic/iris-code.js';
import type { IrisCode } from '../../src/biometrics/iris/iris-code.js';

export interface IrisBenchOptions {
  n?: number;
  /** Mated and non-mated searches each (default 200). */
  searches?: number;
  /** Impostor pairs for the EER (default 20,000). */
  impostorPairs?: number;
  threshold?: number;
  workers?: number;
  log?: (msg: string) => void;
}

export interface IrisBenchResult {
  n: number;
  eer: number;
  fnirAtFpir1e2: number;
  thresholdAtFpir1e2: number;
  fnirAtConfigThreshold: number;
  fpirAtConfigThreshold: number;
  identifyP50Ms: number;
  identifyP95Ms: number;
  identifyPath: string;
  /** Searches of the default path that were split across threads (the rest ran in-process). */
  splitSearches: number;
  /** Share of the stage-1 chunks of split searches that worker threads computed. */
  workerShare: number;
  inProcessP50Ms: number;
  inProcessP95Ms: number;
  /** Median of the floor passes (one before each search of the default path). */
  floorMs: number;
  floorP95Ms: number;
  /** identifyP95Ms / floorMs: the strict comparison. */
  ratio: number;
  /** identifyP95Ms / floorP95Ms: both at their 95th percentile under the same load. */
  ratioP95ToFloorP95: number;
  ratioP50ToFloorP50: number;
  inProcessRatio: number;
  comparisonsPerSec: number;
  scanComparisonsPerSec: number;
  bytesPerTemplate: number;
  galleryBytes: number;
  buildMs: number;
  searches: number;
  loadAverage: number[];
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
}

/** Equal error rate from 1:1 distances (lower = more alike). */
export function equalErrorRate(genuine: number[], impostor: number[]): number {
  const g = [...genuine].sort((a, b) => a - b);
  const im = [...impostor].sort((a, b) => a - b);
  let best = 1;
  let bestGap = Infinity;
  const candidates = [...new Set([...g, ...im])].sort((a, b) => a - b);
  let gi = 0;
  let ii = 0;
  for (const t of candidates) {
    while (gi < g.length && g[gi]! <= t) gi++;
    while (ii < im.length && im[ii]! <= t) ii++;
    const frr = 1 - gi / g.length;
    const far = ii / im.length;
    if (Math.abs(frr - far) < bestGap) {
      bestGap = Math.abs(frr - far);
      best = (frr + far) / 2;
    }
  }
  return best;
}

export async function benchIris(options: IrisBenchOptions = {}): Promise<IrisBenchResult> {
  const n = options.n ?? 100_000;
  const searches = options.searches ?? 200;
  const threshold = options.threshold ?? 0.32;
  const log = options.log ?? (() => undefined);
  const enroll = (i: number) => syntheticIrisSample(syntheticIrisEye(i), 1).code;
  const index = new IrisIndex({ ...(options.workers !== undefined ? { workers: options.workers } : {}) });
  try {
    let t0 = performance.now();
    for (let i = 0; i < n; i++) index.add(`eye-${i}`, enroll(i));
    const buildMs = performance.now() - t0;
    log(`iris: gallery of ${n} built in ${(buildMs / 1000).toFixed(1)} s`);

    // Streaming floor: one pass over the gallery's code and mask words, measured right before
    // every search of the default path so that both see the same machine load.
    const floors: number[] = [];
    const floorPass = () => {
      const start = performance.now();
      streamWords(index.galleryWords);
      floors.push(performance.now() - start);
    };
    for (let r = 0; r < 5; r++) floorPass(); // warm the JIT
    floors.length = 0;

    // Searches: mated (an enrolled eye, a new capture) and non-mated (an eye not enrolled).
    const mated: Array<{ eye: number; probe: IrisCode }> = [];
    const nonMated: IrisCode[] = [];
    for (let s = 0; s < searches; s++) {
      const eye = Math.floor(((s + 0.5) / searches) * n);
      mated.push({ eye, probe: syntheticIrisSample(syntheticIrisEye(eye), 100 + s).code });
      nonMated.push(syntheticIrisSample(syntheticIrisEye(n + 1_000_000 + s), 1).code);
    }
    let splitSearches = 0;
    let chunks = 0;
    let chunksByWorkers = 0;
    const timed = async (path: 'auto' | 'in-process', withFloor: boolean) => {
      const times: number[] = [];
      const matedTop: Array<{ right: boolean; hd: number }> = [];
      const nonMatedTop: number[] = [];
      for (let s = 0; s < searches; s++) {
        if (withFloor) floorPass();
        if (path === 'auto' && index.wouldSplit()) splitSearches++;
        let start = performance.now();
        const [m] = await index.identify(mated[s]!.probe, { threshold: 1, candidates: 1, path });
        times.push(performance.now() - start);
        if (path === 'auto' && index.lastSplit) {
          chunks += index.lastSplit.chunks;
          chunksByWorkers += index.lastSplit.byWorkers;
        }
        matedTop.push({ right: m?.id === `eye-${mated[s]!.eye}`, hd: m?.hd ?? 1 });
        if (withFloor) floorPass();
        if (path === 'auto' && index.wouldSplit()) splitSearches++;
        start = performance.now();
        const [x] = await index.identify(nonMated[s]!, { threshold: 1, candidates: 1, path });
        times.push(performance.now() - start);
        nonMatedTop.push(x?.hd ?? 1);
      }
      times.sort((a, b) => a - b);
      return { p50: quantile(times, 0.5), p95: quantile(times, 0.95), matedTop, nonMatedTop };
    };
    await index.identify(mated[0]!.probe, { threshold: 1 }); // start the workers, warm the JIT
    const auto = await timed('auto', true);
    log(`iris: ${2 * searches} searches on the default path, p95 ${auto.p95.toFixed(1)} ms`);
    const inProcess = await timed('in-process', false);
    const identifyPath =
      index.workerCount > 0 && n >= index.workerThreshold
        ? `calling thread + ${index.workerCount} worker(s) claiming chunks, caller takes over unfinished ones`
        : 'in-process';

    // FNIR at FPIR 1 %: the threshold below which 1 % of non-mated searches return someone.
    floors.sort((a, b) => a - b);
    const floorMs = quantile(floors, 0.5);
    const floorP95Ms = quantile(floors, 0.95);
    const nm = [...auto.nonMatedTop].sort((a, b) => a - b);
    const t1 = quantile(nm, 0.01);
    const fnirAt = (t: number) => auto.matedTop.filter((m) => !(m.right && m.hd <= t)).length / searches;
    const fpirAt = (t: number) => auto.nonMatedTop.filter((h) => h <= t).length / searches;

    // 1:1 EER: each mated probe against its own enrolment, impostor pairs against others.
    const genuine = mated.map((m) => compareIrisCodes(m.probe, enroll(m.eye)).hd);
    const impostorPairs = options.impostorPairs ?? 20_000;
    const galleryForPairs = Array.from({ length: Math.min(n, 500) }, (_, i) => enroll(i));
    const impostor: number[] = [];
    for (let k = 0; k < impostorPairs; k++) {
      const p = nonMated[k % searches]!;
      impostor.push(compareIrisCodes(p, galleryForPairs[(k * 7919) % galleryForPairs.length]!).hd);
    }
    const eer = equalErrorRate(genuine, impostor);

    // Exact comparisons per second on one core: every shift, masks, normalization.
    const words = new Int32Array(galleryForPairs.length * CODE_WORDS);
    galleryForPairs.forEach((c, i) => {
      codeWords(c, words, i * CODE_WORDS);
    });
    const prepared = prepareProbe(mated[0]!.probe, index.shiftRange);
    let count = 0;
    t0 = performance.now();
    while (performance.now() - t0 < 1000) {
      for (let i = 0; i < galleryForPairs.length; i++) exactScore(words, i * CODE_WORDS, prepared);
      count += galleryForPairs.length;
    }
    const comparisonsPerSec = Math.round(count / ((performance.now() - t0) / 1000));

    const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
    return {
      n,
      eer: round(eer),
      fnirAtFpir1e2: round(fnirAt(t1)),
      thresholdAtFpir1e2: round(t1),
      fnirAtConfigThreshold: round(fnirAt(threshold)),
      fpirAtConfigThreshold: round(fpirAt(threshold)),
      identifyP50Ms: round(auto.p50, 2),
      identifyP95Ms: round(auto.p95, 2),
      identifyPath,
      splitSearches,
      workerShare: chunks ? round(chunksByWorkers / chunks, 3) : 0,
      inProcessP50Ms: round(inProcess.p50, 2),
      inProcessP95Ms: round(inProcess.p95, 2),
      floorMs: round(floorMs, 2),
      floorP95Ms: round(floorP95Ms, 2),
      ratio: round(auto.p95 / floorMs, 2),
      ratioP95ToFloorP95: round(auto.p95 / floorP95Ms, 2),
      ratioP50ToFloorP50: round(auto.p50 / floorMs, 2),
      inProcessRatio: round(inProcess.p95 / floorMs, 2),
      comparisonsPerSec,
      scanComparisonsPerSec: Math.round(n / (inProcess.p50 / 1000)),
      bytesPerTemplate: index.bytesPerTemplate(),
      galleryBytes: n * CODE_WORDS * 4,
      buildMs: Math.round(buildMs),
      searches: 2 * searches,
      loadAverage: loadavg().map((x) => round(x, 2)),
    };
  } finally {
    await index.close();
  }
}
