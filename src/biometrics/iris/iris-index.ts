/**
 * In-memory 1:N iris index. Gallery codes live in SharedArrayBuffers (128 words of code and
 * mask plus an 8-word sketch per code, see iris-scan.ts), added and removed one at a time (a
 * removal moves the last code into the hole, so the scanned range stays dense). A search scans
 * in-process for a small gallery; for a large one the calling thread and the worker threads each
 * scan a slice, all with the same kernel on the same memory.
 *
 * Changes made while a worker search is running are applied when it finishes, so a worker never
 * reads a code that is being rewritten.
 */
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import { IRIS_CODE_BYTES, type IrisCode } from './iris-code.js';
import { checkShiftRange, DEFAULT_IRIS_SHIFT_RANGE } from './iris-match.js';
import { CODE_WORDS, SKETCH_WORDS, codeWords, compareScores, prepareProbe, scanRange, sketchWords, type ScanResult } from './iris-scan.js';
import type { ScanRequest } from './iris-scan-worker.js';

const log = logger('biometrics:iris-index');

/**
 * Starts one scan worker. Built code runs `iris-scan-worker.js`; run from the sources (tsx,
 * vitest) the worker registers tsx itself before importing the `.ts` file.
 */
function spawnScanWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./iris-scan-worker.js', import.meta.url));
  const url = new URL('./iris-scan-worker.ts', import.meta.url).href;
  const source = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(source, { eval: true });
}

export interface IrisIndexOptions {
  /** Angular positions tried each way (default 8). */
  shiftRange?: number;
  /** Candidates kept by the sketch stage, per slice, for the exact stage (default 64). */
  prefilter?: number;
  /** Worker threads helping the calling thread on large galleries (default: cores − 1, at most 3; 0 = never). */
  workers?: number;
  /** Gallery size from which the workers are used (default 20,000). */
  workerThreshold?: number;
  /**
   * Use the workers on the 'auto' path only while the 1-minute load average leaves a core free
   * (default true): on an oversubscribed machine a split search waits for threads that get no core
   * (measured at load 10 on 2 cores: p95 82 ms split against 52 ms in-process at N = 100,000).
   */
  loadAware?: boolean;
}

export interface IrisIdentifyOptions {
  /** Largest normalized Hamming distance returned (default 0.32). */
  threshold?: number;
  /** At most this many candidates, best first (default 1). */
  candidates?: number;
  /** Force the in-process path or the worker path (default: by gallery size). */
  path?: 'auto' | 'in-process' | 'workers';
}

export interface IrisCandidate {
  id: string;
  /** Normalized Hamming distance (lower is better). */
  hd: number;
  shift: number;
  bits: number;
}

interface PendingScan {
  resolve: (r: ScanResult) => void;
  reject: (e: Error) => void;
}

export class IrisIndex {
  readonly shiftRange: number;
  readonly prefilter: number;
  readonly workerCount: number;
  readonly workerThreshold: number;
  readonly loadAware: boolean;
  #capacity = 0;
  #codes = new Int32Array(new SharedArrayBuffer(0));
  #sketch = new Int32Array(new SharedArrayBuffer(0));
  #ids: string[] = [];
  #slotOf = new Map<string, number>();
  #workers: Worker[] = [];
  #waiting = new Map<number, PendingScan>();
  #seq = 0;
  #inflight = 0;
  #deferred: Array<() => void> = [];
  #closed = false;
  #workersBroken = false;

  constructor(options: IrisIndexOptions = {}) {
    this.shiftRange = checkShiftRange(options.shiftRange ?? DEFAULT_IRIS_SHIFT_RANGE);
    this.prefilter = Math.max(1, options.prefilter ?? 64);
    this.workerCount = Math.max(0, options.workers ?? Math.min(3, availableParallelism() - 1));
    this.workerThreshold = options.workerThreshold ?? 20_000;
    this.loadAware = options.loadAware ?? true;
  }

  get size(): number {
    return this.#ids.length;
  }

  has(id: string): boolean {
    return this.#slotOf.has(id);
  }

  /** Resident bytes per gallery code (code, mask and sketch words). */
  bytesPerTemplate(): number {
    return (CODE_WORDS + SKETCH_WORDS) * 4;
  }

  /** The shared gallery words (for the streaming-floor measurement). */
  get galleryWords(): Int32Array {
    return this.#codes.subarray(0, this.size * CODE_WORDS);
  }

  /** Adds or replaces the code of `id`. */
  add(id: string, code: IrisCode): void {
    if (code.code.length !== IRIS_CODE_BYTES || code.mask.length !== IRIS_CODE_BYTES) {
      throw new AgentError('BIOMETRICS_TEMPLATE_INVALID', `iris code ${id}: code and mask must be ${IRIS_CODE_BYTES} bytes each`, { id });
    }
    if (this.#inflight > 0) {
      const copy: IrisCode = { ...code, code: code.code.slice(), mask: code.mask.slice() };
      this.#deferred.push(() => this.add(id, copy));
      return;
    }
    let slot = this.#slotOf.get(id);
    if (slot === undefined) {
      slot = this.#ids.length;
      if (slot >= this.#capacity) this.#grow(Math.max(1024, this.#capacity * 2));
      this.#ids.push(id);
      this.#slotOf.set(id, slot);
    }
    codeWords(code, this.#codes, slot * CODE_WORDS);
    sketchWords(this.#codes, slot * CODE_WORDS, this.#sketch, slot * SKETCH_WORDS);
  }

  /** Removes `id`; true if it was there (a removal during a worker search counts as done). */
  remove(id: string): boolean {
    if (this.#inflight > 0) {
      const had = this.#slotOf.has(id);
      this.#deferred.push(() => this.remove(id));
      return had;
    }
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return false;
    const last = this.#ids.length - 1;
    if (slot !== last) {
      const lastId = this.#ids[last]!;
      this.#codes.copyWithin(slot * CODE_WORDS, last * CODE_WORDS, (last + 1) * CODE_WORDS);
      this.#sketch.copyWithin(slot * SKETCH_WORDS, last * SKETCH_WORDS, (last + 1) * SKETCH_WORDS);
      this.#ids[slot] = lastId;
      this.#slotOf.set(lastId, slot);
    }
    this.#ids.pop();
    this.#slotOf.delete(id);
    return true;
  }

  #grow(capacity: number): void {
    const codes = new Int32Array(new SharedArrayBuffer(capacity * CODE_WORDS * 4));
    const sketch = new Int32Array(new SharedArrayBuffer(capacity * SKETCH_WORDS * 4));
    codes.set(this.#codes.subarray(0, this.size * CODE_WORDS));
    sketch.set(this.#sketch.subarray(0, this.size * SKETCH_WORDS));
    this.#codes = codes;
    this.#sketch = sketch;
    this.#capacity = capacity;
  }

  /** The in-process search (also the reference the worker path is tested against). */
  identifySync(probe: IrisCode, options: IrisIdentifyOptions = {}): IrisCandidate[] {
    const { threshold, limit } = this.#limits(options);
    const r = scanRange(this.#codes, this.#sketch, 0, this.size, prepareProbe(probe, this.shiftRange), this.prefilter, threshold, limit);
    return this.#toCandidates([r], limit);
  }

  async identify(probe: IrisCode, options: IrisIdentifyOptions = {}): Promise<IrisCandidate[]> {
    if (this.#closed) throw new AgentError('BIOMETRICS_INDEX_CLOSED', 'the iris index is closed', {});
    const path = options.path ?? 'auto';
    const useWorkers = !this.#workersBroken && this.workerCount > 0 && (path === 'workers' || (path === 'auto' && this.size >= this.workerThreshold && this.#coreFree()));
    if (!useWorkers || this.size === 0) return this.identifySync(probe, options);
    const { threshold, limit } = this.#limits(options);
    // The calling thread scans one slice itself while the workers scan the others.
    const slices = Math.max(1, Math.min(this.workerCount + 1, this.size));
    this.#startWorkers(slices - 1);
    const prepared = prepareProbe(probe, this.shiftRange);
    const n = this.size;
    const bounds = (i: number) => [Math.floor((i * n) / slices), Math.floor(((i + 1) * n) / slices)] as const;
    this.#inflight++;
    try {
      const pending = Array.from({ length: slices - 1 }, (_, i) =>
        this.#scanInWorker(i, {
          seq: 0,
          codes: this.#codes.buffer as SharedArrayBuffer,
          sketch: this.#sketch.buffer as SharedArrayBuffer,
          start: bounds(i)[0],
          end: bounds(i)[1],
          probe: prepared,
          prefilter: this.prefilter,
          threshold,
          limit,
        }),
      );
      const [start, end] = bounds(slices - 1);
      const own = scanRange(this.#codes, this.#sketch, start, end, prepared, this.prefilter, threshold, limit);
      const parts = [...(await Promise.all(pending)), own];
      return this.#toCandidates(parts, limit);
    } catch (err) {
      if (!(err instanceof AgentError && err.code === 'BIOMETRICS_WORKER_FAILED')) throw err;
      this.#workersBroken = true;
      return this.identifySync(probe, options);
    } finally {
      this.#inflight--;
      if (this.#inflight === 0) this.#applyDeferred();
    }
  }

  /** Whether the auto path would split a search now (gallery size, workers, machine load). */
  wouldSplit(): boolean {
    return !this.#workersBroken && this.workerCount > 0 && this.size >= this.workerThreshold && this.#coreFree();
  }

  #coreFree(): boolean {
    return !this.loadAware || loadavg()[0]! < availableParallelism() - 0.5;
  }

  #applyDeferred(): void {
    const ops = this.#deferred;
    this.#deferred = [];
    for (const op of ops) op();
  }

  #limits(options: IrisIdentifyOptions): { threshold: number; limit: number } {
    return { threshold: options.threshold ?? 0.32, limit: Math.max(1, options.candidates ?? 1) };
  }

  #toCandidates(parts: ScanResult[], limit: number): IrisCandidate[] {
    const all: Array<IrisCandidate & { slot: number; hdRaw: number }> = [];
    for (const r of parts) {
      for (let i = 0; i < r.slots.length; i++) all.push({ slot: r.slots[i]!, id: this.#ids[r.slots[i]!]!, hd: r.hd[i]!, hdRaw: r.hdRaw[i]!, shift: r.shift[i]!, bits: r.bits[i]! });
    }
    all.sort((a, b) => compareScores(a, b) || a.slot - b.slot);
    return all.slice(0, limit).map(({ id, hd, shift, bits }) => ({ id, hd, shift, bits }));
  }

  #startWorkers(count: number): void {
    while (this.#workers.length < count) {
      const worker = spawnScanWorker();
      worker.unref();
      worker.on('message', (m: ScanResult & { seq: number; error?: string }) => {
        const p = this.#waiting.get(m.seq);
        if (!p) return;
        this.#waiting.delete(m.seq);
        if (m.error) p.reject(new AgentError('BIOMETRICS_WORKER_FAILED', `iris scan worker failed: ${m.error}`, {}));
        else p.resolve(m);
      });
      worker.on('error', (err) => this.#failWorkers(err));
      this.#workers.push(worker);
    }
  }

  #failWorkers(err: Error): void {
    log.error({ err: err.message }, 'iris scan worker failed; searches run in-process from now on');
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const w of this.#workers) void w.terminate();
    this.#workers = [];
    for (const p of waiting) p.reject(new AgentError('BIOMETRICS_WORKER_FAILED', `iris scan worker failed: ${err.message}`, {}, { retryable: true, cause: err }));
  }

  #scanInWorker(i: number, req: ScanRequest): Promise<ScanResult> {
    return new Promise((resolve, reject) => {
      const seq = ++this.#seq;
      this.#waiting.set(seq, { resolve, reject });
      const w = this.#workers[i % this.#workers.length]!;
      w.ref();
      const done = () => w.unref();
      this.#waiting.set(seq, { resolve: (r) => (done(), resolve(r)), reject: (e) => (done(), reject(e)) });
      w.postMessage({ ...req, seq });
    });
  }

  /** Stops the worker threads (the index stays usable in-process). */
  async close(): Promise<void> {
    this.#closed = true;
    const ws = this.#workers;
    this.#workers = [];
    await Promise.all(ws.map((w) => w.terminate()));
  }
}
