/**
 * In-memory 1:N iris index. Gallery codes live in SharedArrayBuffers (128 words of code and
 * mask plus an 8-word sketch per code, see iris-scan.ts), added and removed one at a time (a
 * removal moves the last code into the hole, so the scanned range stays dense).
 *
 * A search on a large gallery is split without ever waiting for another thread: the stage-1
 * sketch scan is cut into chunks that the calling thread and the worker threads claim from a
 * shared counter, writing their scores into one shared array; when the calling thread runs out
 * of free chunks it computes any chunk a worker claimed but has not finished (the same scores),
 * then does the selection and the exact scores itself. A worker that is slow, preempted or dead
 * only means the calling thread does more of the work: a split search is never slower than an
 * in-process one by more than the cost of posting the request.
 *
 * Memory: the gallery is one layout (two shared arrays, grown by half when full, or sized at once
 * with `reserve`), and searches reuse their buffers: a set of shared search buffers (state, probe
 * sketch, stage-1 scores; iris-scan.ts) is reused as soon as no worker is inside it, so a search
 * allocates no shared memory (a new set is made only when a late worker still holds every set,
 * or the gallery outgrew them; `scratchAllocations` counts them). The in-process path reuses one
 * score array the same way.
 */
import { startWorker } from '../worker.js';
import { availableParallelism, loadavg } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { AgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import { IRIS_CODE_BYTES, type IrisCode } from './iris-code.js';
import { checkShiftRange, DEFAULT_IRIS_SHIFT_RANGE } from './iris-match.js';
import {
  CHUNK_HEADER,
  CODE_WORDS,
  PROBE_SKETCH_WORDS,
  SKETCH_WORDS,
  STATE_WORDS,
  S_ACTIVE,
  S_BY_WORKERS,
  S_CANCEL,
  S_CHUNK,
  S_COUNTER,
  S_GALLERY,
  S_GEN,
  S_N,
  S_SHIFTS,
  S_WAKE,
  chunkSize,
  claimChunks,
  codeWords,
  compareScores,
  finishScan,
  prepareProbe,
  scanRange,
  sketchWords,
  stealChunks,
  type ScanResult,
  type SearchScratch,
} from './iris-scan.js';
import type { ScanWorkerMessage } from './iris-scan-worker.js';
import { count, idsFromBytes, idsToBytes, positions, type SnapshotLoad, type SnapshotPart } from '../snapshot-part.js';

/** Layout of the gallery in a snapshot; bump when the code words or their order change. */
export const IRIS_SNAPSHOT_FORMAT = 'iris-index/1';

const log = logger('biometrics:iris-index');

/**
 * Starts one scan worker. Built code runs `iris-scan-worker.js`; run from the sources (tsx,
 * vitest) the worker registers tsx itself before importing the `.ts` file.
 */
function spawnScanWorker(): Worker {
  // A scan worker allocates next to nothing (it reads and writes shared memory): a small heap,
  // so it never grows a young generation of its own (each would hold megabytes per worker).
  return startWorker(import.meta.url, './iris-scan-worker', {
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 32 },
  });
}

function scratchMessage(id: number, s: SearchScratch): ScanWorkerMessage {
  return {
    type: 'scratch',
    id,
    state: s.state.buffer as SharedArrayBuffer,
    coarse: s.coarse.buffer as SharedArrayBuffer,
    probeSketch: s.probeSketch.buffer as SharedArrayBuffer,
  };
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
   * Split on the 'auto' path only while the 1-minute load average leaves a core free (default
   * false: the calling thread never waits for a worker, so splitting costs nothing when the
   * workers get no core).
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
  /**
   * Worker path only: the calling thread scans chunks too (default true). False leaves stage 1 to
   * the workers, waiting up to 5 s before taking over (tests use it to check the workers' scores).
   */
  callerScans?: boolean;
}

export interface IrisCandidate {
  id: string;
  /** Normalized Hamming distance (lower is better). */
  hd: number;
  shift: number;
  bits: number;
}

/** How the last split search was shared out. */
export interface SplitStats {
  chunks: number;
  byWorkers: number;
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
  /** Bumped when the gallery buffers are replaced (workers holding an older one stay out). */
  #galleryVersion = 0;
  #ids: string[] = [];
  #slotOf = new Map<string, number>();
  #workers: Worker[] = [];
  #closed = false;
  #lastSplit: SplitStats | null = null;
  #workersBroken = false;
  /** Shared search buffers by id, each told to every worker once. */
  readonly #scratches = new Map<number, SearchScratch & { capacity: number }>();
  #scratchAllocations = 0;
  #searchGen = 0;
  /** The in-process path's stage-1 scores, reused. */
  #localScores = new Uint16Array(0);

  constructor(options: IrisIndexOptions = {}) {
    this.shiftRange = checkShiftRange(options.shiftRange ?? DEFAULT_IRIS_SHIFT_RANGE);
    this.prefilter = Math.max(1, options.prefilter ?? 64);
    this.workerCount = Math.max(0, options.workers ?? Math.min(3, availableParallelism() - 1));
    this.workerThreshold = options.workerThreshold ?? 20_000;
    this.loadAware = options.loadAware ?? false;
  }

  get size(): number {
    return this.#ids.length;
  }

  has(id: string): boolean {
    return this.#slotOf.has(id);
  }

  /** The ids in slot order (read only). */
  get ids(): readonly string[] {
    return this.#ids;
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
    let slot = this.#slotOf.get(id);
    if (slot === undefined) {
      slot = this.#ids.length;
      if (slot >= this.#capacity) this.#grow(Math.max(1024, Math.ceil(this.#capacity * 1.5)));
      this.#ids.push(id);
      this.#slotOf.set(id, slot);
    }
    codeWords(code, this.#codes, slot * CODE_WORDS);
    sketchWords(this.#codes, slot * CODE_WORDS, this.#sketch, slot * SKETCH_WORDS);
  }

  /** Removes `id`; true if it was there. */
  remove(id: string): boolean {
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

  /** The gallery for a snapshot: the ids (in slot order) and the code words (the sketches are recomputed). */
  snapshot(): SnapshotPart {
    const ids = idsToBytes(this.#ids);
    return {
      meta: { format: IRIS_SNAPSHOT_FORMAT, count: this.size, idsBytes: ids.length },
      sections: [ids, this.#codes.subarray(0, this.size * CODE_WORDS)],
    };
  }

  /**
   * Takes the gallery of a snapshot (into an empty index): the code words go straight into a
   * gallery sized for them. A reason when the meta is not this layout's.
   */
  loadSnapshot(meta: Record<string, unknown>): SnapshotLoad | string {
    const n = count(meta, 'count');
    const idsBytes = count(meta, 'idsBytes');
    if (meta.format !== IRIS_SNAPSHOT_FORMAT || n === null || idsBytes === null)
      return `iris layout ${String(meta.format)} is not ${IRIS_SNAPSHOT_FORMAT}`;
    if (this.size > 0) return 'the iris index is not empty';
    this.reserve(n);
    const ids = new Uint8Array(idsBytes);
    const codes = this.#codes.subarray(0, n * CODE_WORDS);
    return {
      targets: [ids, codes],
      commit: () => {
        const list = idsFromBytes(ids);
        if (list.length !== n) throw new Error(`the snapshot holds ${list.length} iris ids for ${n} codes`);
        this.#ids = list;
        this.#slotOf = positions(list);
        for (let slot = 0; slot < n; slot++) sketchWords(this.#codes, slot * CODE_WORDS, this.#sketch, slot * SKETCH_WORDS);
      },
    };
  }

  /** True when the gallery holds `code` for `id` exactly (a snapshot's sample check against the cache). */
  holds(id: string, code: IrisCode): boolean {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return false;
    const words = new Int32Array(CODE_WORDS);
    codeWords(code, words, 0);
    for (let w = 0; w < CODE_WORDS; w++) if (words[w] !== this.#codes[slot * CODE_WORDS + w]) return false;
    return true;
  }

  /** Empties the gallery (keeps its workers). */
  clear(): void {
    this.#ids = [];
    this.#slotOf = new Map();
    this.#capacity = 0;
    this.#grow(0);
  }

  /** Sizes the gallery for `count` codes at once (a build that knows its size allocates once). */
  reserve(count: number): void {
    if (count > this.#capacity) this.#grow(count);
  }

  #grow(capacity: number): void {
    const codes = new Int32Array(new SharedArrayBuffer(capacity * CODE_WORDS * 4));
    const sketch = new Int32Array(new SharedArrayBuffer(capacity * SKETCH_WORDS * 4));
    codes.set(this.#codes.subarray(0, this.size * CODE_WORDS));
    sketch.set(this.#sketch.subarray(0, this.size * SKETCH_WORDS));
    this.#codes = codes;
    this.#sketch = sketch;
    this.#capacity = capacity;
    this.#galleryVersion++;
    this.#post({ type: 'gallery', sketch: sketch.buffer as SharedArrayBuffer, version: this.#galleryVersion });
  }

  /** Resident bytes of the gallery buffers (codes, masks, sketches) as allocated. */
  get galleryBytes(): number {
    return this.#codes.byteLength + this.#sketch.byteLength;
  }

  /** Sets of shared search buffers made so far (bounded: searches reuse them). */
  get scratchAllocations(): number {
    return this.#scratchAllocations;
  }

  /** The in-process search (also the reference the worker path is tested against). */
  identifySync(probe: IrisCode, options: IrisIdentifyOptions = {}): IrisCandidate[] {
    const { threshold, limit } = this.#limits(options);
    if (this.#localScores.length < this.size) this.#localScores = new Uint16Array(this.#capacity);
    const r = scanRange(
      this.#codes,
      this.#sketch,
      0,
      this.size,
      prepareProbe(probe, this.shiftRange),
      this.prefilter,
      threshold,
      limit,
      this.#localScores,
    );
    return this.#toCandidates([r], limit);
  }

  async identify(probe: IrisCode, options: IrisIdentifyOptions = {}): Promise<IrisCandidate[]> {
    if (this.#closed) throw new AgentError('BIOMETRICS_INDEX_CLOSED', 'the iris index is closed', {});
    const path = options.path ?? 'auto';
    const split = path === 'workers' ? this.#canSplit() && this.size > 0 : path === 'auto' && this.wouldSplit();
    if (!split) return this.identifySync(probe, options);
    const { threshold, limit } = this.#limits(options);
    const prepared = prepareProbe(probe, this.shiftRange);
    const n = this.size;
    const chunk = chunkSize(n);
    const total = Math.ceil(n / chunk);
    this.#startWorkers();
    const [id, s] = this.#freeScratch(n);
    const state = s.state;
    // Set the search up in shared memory, the cancel flag last: a worker woken by an older
    // search's message sees another search number (or the flag) and claims nothing.
    Atomics.store(state, S_GEN, ++this.#searchGen);
    Atomics.store(state, S_COUNTER, 0);
    Atomics.store(state, S_BY_WORKERS, 0);
    state.fill(0, CHUNK_HEADER, CHUNK_HEADER + total);
    Atomics.store(state, S_N, n);
    Atomics.store(state, S_CHUNK, chunk);
    Atomics.store(state, S_SHIFTS, prepared.shiftCount);
    Atomics.store(state, S_GALLERY, this.#galleryVersion);
    s.probeSketch.set(prepared.sketch);
    Atomics.store(state, S_CANCEL, 0);
    this.#post({ type: 'search', scratch: id });
    if (options.callerScans ?? true) claimChunks(this.#sketch, s, n, chunk, prepared);
    else this.#waitForWorkers(state, total);
    stealChunks(this.#sketch, s, n, chunk, prepared);
    Atomics.store(state, S_CANCEL, 1); // late workers stop claiming
    this.#lastSplit = { chunks: total, byWorkers: Atomics.load(state, S_BY_WORKERS) };
    const r = finishScan(this.#codes, this.#sketch, s.coarse.subarray(0, n), 0, n, prepared, this.prefilter, threshold, limit);
    return this.#toCandidates([r], limit);
  }

  /**
   * A set of search buffers no worker is inside and large enough for `n` codes; a new one (told to
   * the workers) only when every set is held by a late worker or too small for the gallery.
   */
  #freeScratch(n: number): [number, SearchScratch] {
    for (const [id, s] of this.#scratches) {
      if (s.capacity < n) {
        this.#scratches.delete(id);
        this.#post({ type: 'forget', id });
        continue;
      }
      if (Atomics.load(s.state, S_ACTIVE) === 0) return [id, s];
    }
    const capacity = Math.max(n, this.#capacity);
    const s = {
      capacity,
      state: new Int32Array(new SharedArrayBuffer(STATE_WORDS * 4)),
      coarse: new Uint16Array(new SharedArrayBuffer(capacity * 2)),
      probeSketch: new Int32Array(new SharedArrayBuffer(PROBE_SKETCH_WORDS * 4)),
    };
    Atomics.store(s.state, S_CANCEL, 1);
    const id = ++this.#scratchAllocations;
    this.#scratches.set(id, s);
    this.#post(scratchMessage(id, s));
    return [id, s];
  }

  #post(message: ScanWorkerMessage): void {
    for (const w of this.#workers) w.postMessage(message);
  }

  /** How the last split search was shared between the calling thread and the workers. */
  get lastSplit(): SplitStats | null {
    return this.#lastSplit;
  }

  #waitForWorkers(state: Int32Array, total: number): void {
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !this.#workersBroken) {
      let done = 0;
      for (let c = 0; c < total; c++) if (Atomics.load(state, CHUNK_HEADER + c) === 2) done++;
      if (done === total) return;
      Atomics.wait(state, S_WAKE, Atomics.load(state, S_WAKE), 20);
    }
  }

  /** Whether the auto path would split a search now (gallery size, workers, machine load). */
  wouldSplit(): boolean {
    return this.#canSplit() && this.size >= this.workerThreshold && (!this.loadAware || loadavg()[0]! < availableParallelism() - 0.5);
  }

  #canSplit(): boolean {
    return !this.#workersBroken && !this.#closed && this.workerCount > 0;
  }

  #limits(options: IrisIdentifyOptions): { threshold: number; limit: number } {
    return { threshold: options.threshold ?? 0.32, limit: Math.max(1, options.candidates ?? 1) };
  }

  #toCandidates(parts: ScanResult[], limit: number): IrisCandidate[] {
    const all: Array<IrisCandidate & { slot: number; hdRaw: number }> = [];
    for (const r of parts) {
      for (let i = 0; i < r.slots.length; i++)
        all.push({
          slot: r.slots[i]!,
          id: this.#ids[r.slots[i]!]!,
          hd: r.hd[i]!,
          hdRaw: r.hdRaw[i]!,
          shift: r.shift[i]!,
          bits: r.bits[i]!,
        });
    }
    all.sort((a, b) => compareScores(a, b) || a.slot - b.slot);
    return all.slice(0, limit).map(({ id, hd, shift, bits }) => ({ id, hd, shift, bits }));
  }

  #startWorkers(): void {
    while (this.#workers.length < this.workerCount) {
      const worker = spawnScanWorker();
      worker.unref();
      worker.on('error', (err) => this.#failWorkers(err));
      this.#workers.push(worker);
      // A new worker learns the buffers that exist: the gallery's sketch and every search set.
      worker.postMessage({
        type: 'gallery',
        sketch: this.#sketch.buffer as SharedArrayBuffer,
        version: this.#galleryVersion,
      } satisfies ScanWorkerMessage);
      for (const [id, s] of this.#scratches) worker.postMessage(scratchMessage(id, s));
    }
  }

  #failWorkers(err: Error): void {
    if (this.#workersBroken) return;
    this.#workersBroken = true;
    log.error({ err: err.message }, 'iris scan worker failed; searches run in-process from now on');
    for (const w of this.#workers) void w.terminate();
    this.#workers = [];
  }

  /** Stops the worker threads (the index stays usable in-process). */
  async close(): Promise<void> {
    this.#closed = true;
    const ws = this.#workers;
    this.#workers = [];
    await Promise.all(ws.map((w) => w.terminate()));
  }
}
