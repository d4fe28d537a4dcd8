/**
 * In-memory 1:N fingerprint index over typed arrays, built once from the template cache and updated
 * incrementally.
 *
 * Every template is prepared once (`prepareFinger`) and appended to one growing Uint16Array arena;
 * its prefilter features (a cell and a direction each, prefilter.ts) go to two more arrays; per
 * slot the index keeps only offsets and counts in flat typed arrays (no object per template).
 * `search` runs in two passes:
 * 1. prefilter (prefilter.ts): every template scored by the probe's local structures that it
 *    shares at one consistent rotation; the best `candidates` (default 300) go on.
 * 2. full comparison of the probe (prepared and bucketed once) with each candidate.
 * `identify` keeps the results at or above a threshold; the 1:N decision on persons is
 * identify-person.ts. Removing marks the slot dead; the arrays are compacted when a third is dead.
 * Arrays grow by an eighth (not double), so at most an eighth of what they hold is unused.
 */
import { FingerProbe, compareProbe, prepareFinger, preparedWords } from './matcher.js';
import { CELLS, PrefilterProbe, prefilterFeatures, type PrefilterGallery } from './prefilter.js';
import type { FingerTemplate } from './template.js';
import { count, idsFromBytes, idsToBytes, positions, type SnapshotLoad, type SnapshotPart } from '../snapshot-part.js';

/**
 * Layout of the index in a snapshot: the prepared templates (`prepareFinger`) and the prefilter
 * features as they are. Bump it whenever `prepareFinger`, the edge layout or the prefilter cells
 * or directions change, or a snapshot would hand the matcher data of another shape (a snapshot of
 * another layout is refused, and the identifier builds the index from the cache instead).
 * 2: the features' directions (the rotation vote of the prefilter); no per-slot lengths.
 */
export const FINGER_SNAPSHOT_FORMAT = 'finger-index/2';

/** A typed array's next length: an eighth more, at least `needed`. */
function grown(length: number, needed: number): number {
  return Math.max(needed, length + (length >> 3));
}

/** Full comparisons per identification unless told otherwise. */
export const DEFAULT_CANDIDATES = 300;

export interface IdentifyOptions {
  /** How many prefilter survivors get a full comparison (default DEFAULT_CANDIDATES = 300). */
  candidates?: number;
  /** Minimum calibrated score to report (default 40 ≈ FMR 1e-4). */
  threshold?: number;
}

export interface IdentifyResult {
  id: string;
  score: number;
}

export class FingerIndex {
  private arena = new Uint16Array(1 << 16);
  private used = 0;
  private dead = 0;
  private capacity = 0;
  private slots = 0;
  private offsets = new Int32Array(0);
  private feats = new Uint16Array(1 << 14);
  private dirs = new Uint8Array(1 << 14);
  private featsUsed = 0;
  private featOffsets = new Int32Array(0);
  private featCounts = new Uint16Array(0);
  /** How many templates' features fall in each cell (for the idf weights of the prefilter). */
  private cellFreq = new Int32Array(CELLS);
  private ids: Array<string | undefined> = [];
  private slotOf = new Map<string, number>();
  private prefilterScores = new Float32Array(0);
  /** Per-search buffers, reused: the probe's cells (emptied after each search) and the selection copy. */
  private readonly prefilter = new PrefilterProbe();
  private selection = new Float32Array(0);

  get size(): number {
    return this.slotOf.size;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /** The ids in slot order; a removed template's slot is undefined until the next compaction. */
  get slotIds(): ReadonlyArray<string | undefined> {
    return this.ids.slice(0, this.slots);
  }

  /** Adds (or replaces) one template. */
  add(id: string, t: FingerTemplate): void {
    if (this.slotOf.has(id)) this.remove(id);
    const p = prepareFinger(t);
    const words = p.data.length;
    if (this.used + words > this.arena.length) {
      const next = new Uint16Array(grown(this.arena.length, this.used + words));
      next.set(this.arena.subarray(0, this.used));
      this.arena = next;
    }
    this.arena.set(p.data, this.used);
    if (this.slots === this.capacity) this.growSlots(Math.max(64, this.capacity * 2));
    const s = this.slots++;
    this.offsets[s] = this.used;
    const f = prefilterFeatures(p);
    const k = f.cells.length;
    if (this.featsUsed + k > this.feats.length) {
      const length = grown(this.feats.length, this.featsUsed + k);
      const feats = new Uint16Array(length);
      feats.set(this.feats.subarray(0, this.featsUsed));
      this.feats = feats;
      const dirs = new Uint8Array(length);
      dirs.set(this.dirs.subarray(0, this.featsUsed));
      this.dirs = dirs;
    }
    for (const c of f.cells) this.cellFreq[c]!++;
    this.feats.set(f.cells, this.featsUsed);
    this.dirs.set(f.directions, this.featsUsed);
    this.featOffsets[s] = this.featsUsed;
    this.featCounts[s] = k;
    this.featsUsed += k;
    this.ids[s] = id;
    this.slotOf.set(id, s);
    this.used += words;
  }

  /** The index for a snapshot (compacted first): ids, prepared arena, slot offsets, features and their directions, cell counts. */
  snapshot(): SnapshotPart {
    if (this.dead > 0) this.compact();
    const n = this.slots;
    const ids = idsToBytes(this.ids.slice(0, n));
    return {
      meta: { format: FINGER_SNAPSHOT_FORMAT, slots: n, used: this.used, featsUsed: this.featsUsed, idsBytes: ids.length },
      sections: [
        ids,
        this.arena.subarray(0, this.used),
        this.offsets.subarray(0, n),
        this.feats.subarray(0, this.featsUsed),
        this.dirs.subarray(0, this.featsUsed),
        this.featOffsets.subarray(0, n),
        this.featCounts.subarray(0, n),
        this.cellFreq,
      ],
    };
  }

  /** Takes the state of a snapshot (into an empty index), arrays sized exactly. A reason when the meta is not this layout's. */
  loadSnapshot(meta: Record<string, unknown>): SnapshotLoad | string {
    const n = count(meta, 'slots');
    const used = count(meta, 'used');
    const featsUsed = count(meta, 'featsUsed');
    const idsBytes = count(meta, 'idsBytes');
    if (meta.format !== FINGER_SNAPSHOT_FORMAT || n === null || used === null || featsUsed === null || idsBytes === null)
      return `finger layout ${String(meta.format)} is not ${FINGER_SNAPSHOT_FORMAT}`;
    if (this.size > 0) return 'the finger index is not empty';
    const ids = new Uint8Array(idsBytes);
    const arena = new Uint16Array(Math.max(used, 1));
    const feats = new Uint16Array(Math.max(featsUsed, 1));
    const dirs = new Uint8Array(Math.max(featsUsed, 1));
    const cap = Math.max(n, 64);
    const offsets = new Int32Array(cap);
    const featOffsets = new Int32Array(cap);
    const featCounts = new Uint16Array(cap);
    const cellFreq = new Int32Array(CELLS);
    return {
      targets: [
        ids,
        arena.subarray(0, used),
        offsets.subarray(0, n),
        feats.subarray(0, featsUsed),
        dirs.subarray(0, featsUsed),
        featOffsets.subarray(0, n),
        featCounts.subarray(0, n),
        cellFreq,
      ],
      commit: () => {
        const list = idsFromBytes(ids);
        if (list.length !== n) throw new Error(`the snapshot holds ${list.length} finger ids for ${n} slots`);
        Object.assign(this, {
          arena,
          used,
          dead: 0,
          capacity: cap,
          slots: n,
          offsets,
          feats,
          dirs,
          featsUsed,
          featOffsets,
          featCounts,
          cellFreq,
          ids: list,
          prefilterScores: new Float32Array(0),
        });
        this.slotOf = positions(list);
      },
    };
  }

  /** True when the index holds `t` prepared as it would prepare it now (a snapshot's sample check). */
  holds(id: string, t: FingerTemplate): boolean {
    const s = this.slotOf.get(id);
    if (s === undefined) return false;
    const p = prepareFinger(t);
    const off = this.offsets[s]!;
    if (p.data.length !== preparedWords(this.arena[off]!)) return false;
    for (let i = 0; i < p.data.length; i++) if (p.data[i] !== this.arena[off + i]) return false;
    const f = prefilterFeatures(p);
    if (f.cells.length !== this.featCounts[s]) return false;
    for (let i = 0, q = this.featOffsets[s]!; i < f.cells.length; i++, q++)
      if (f.cells[i] !== this.feats[q] || f.directions[i] !== this.dirs[q]) return false;
    return true;
  }

  /** Empties the index. */
  clear(): void {
    Object.assign(this, new FingerIndex());
  }

  /** Removes a template; false when the id is not in the index. */
  remove(id: string): boolean {
    const s = this.slotOf.get(id);
    if (s === undefined) return false;
    this.slotOf.delete(id);
    this.ids[s] = undefined;
    this.dead += preparedWords(this.arena[this.offsets[s]!]!);
    for (let q = this.featOffsets[s]!, e = q + this.featCounts[s]!; q < e; q++) this.cellFreq[this.feats[q]!]!--;
    if (this.dead > this.used / 3) this.compact();
    return true;
  }

  /** 1:N identification: the candidates `search` compared, those at or above `threshold` (default 40). */
  identify(probe: FingerTemplate, options: IdentifyOptions = {}): IdentifyResult[] {
    const threshold = options.threshold ?? 40;
    return this.search(probe, options).filter((r) => r.score >= threshold);
  }

  /**
   * Prefilters every template and fully compares the best `candidates` (default 300) with the
   * probe: every compared candidate with its score, best first (whatever the score).
   */
  search(probe: FingerTemplate, options: { candidates?: number } = {}): IdentifyResult[] {
    const wanted = Math.max(1, options.candidates ?? DEFAULT_CANDIDATES);
    const prepared = prepareFinger(probe);
    const slots = this.slots;
    if (this.prefilterScores.length < slots) this.prefilterScores = new Float32Array(this.capacity);
    const scores = this.prefilterScores;
    const gallery: PrefilterGallery = {
      slots,
      ids: this.ids,
      feats: this.feats,
      dirs: this.dirs,
      featOffsets: this.featOffsets,
      featCounts: this.featCounts,
      cellFreq: this.cellFreq,
      featsUsed: this.featsUsed,
    };
    this.prefilter.set(prepared, gallery);
    this.prefilter.score(gallery, scores);
    this.prefilter.clear();
    const alive = this.size;
    // Selection of the top `wanted` prefilter scores: the wanted-th largest by quickselect.
    let cutoff = -Infinity;
    if (alive > wanted) {
      if (this.selection.length < alive) this.selection = new Float32Array(this.capacity);
      const copy = this.selection.subarray(0, alive);
      let c = 0;
      for (let s = 0; s < slots; s++) if (scores[s]! >= 0) copy[c++] = scores[s]!;
      cutoff = kthLargest(copy, wanted);
    }
    const fp = new FingerProbe(prepared);
    const results: IdentifyResult[] = [];
    for (let s = 0; s < slots && results.length < wanted; s++) {
      if (scores[s]! < 0 || scores[s]! < cutoff) continue;
      results.push({ id: this.ids[s]!, score: compareProbe(fp, { data: this.arena, offset: this.offsets[s]! }) });
    }
    return results.sort((a, b) => b.score - a.score);
  }

  /** Full comparisons of the probe with the given templates (ids not in the index are left out), best first. */
  compare(probe: FingerTemplate, ids: Iterable<string>): IdentifyResult[] {
    const fp = new FingerProbe(prepareFinger(probe));
    const results: IdentifyResult[] = [];
    for (const id of ids) {
      const s = this.slotOf.get(id);
      if (s !== undefined) results.push({ id, score: compareProbe(fp, { data: this.arena, offset: this.offsets[s]! }) });
    }
    return results.sort((a, b) => b.score - a.score);
  }

  /** Resident bytes per template: arena, slot arrays, prefilter vectors (allocated) and ids. */
  bytesPerTemplate(): number {
    const n = this.size;
    if (n === 0) return 0;
    let idBytes = 0;
    for (const id of this.slotOf.keys()) idBytes += 16 + 2 * id.length + 48; // string + Map entry
    const typed =
      this.arena.byteLength +
      this.offsets.byteLength +
      this.feats.byteLength +
      this.dirs.byteLength +
      this.cellFreq.byteLength +
      this.featOffsets.byteLength +
      this.featCounts.byteLength +
      this.prefilterScores.byteLength +
      this.prefilter.bytes +
      this.selection.byteLength +
      this.ids.length * 8;
    return Math.round((typed + idBytes) / n);
  }

  private growSlots(capacity: number): void {
    const offsets = new Int32Array(capacity);
    offsets.set(this.offsets.subarray(0, this.slots));
    const featOffsets = new Int32Array(capacity);
    featOffsets.set(this.featOffsets.subarray(0, this.slots));
    const featCounts = new Uint16Array(capacity);
    featCounts.set(this.featCounts.subarray(0, this.slots));
    this.offsets = offsets;
    this.featOffsets = featOffsets;
    this.featCounts = featCounts;
    this.capacity = capacity;
  }

  private compact(): void {
    let w = 0;
    let fw = 0;
    let slot = 0;
    const ids: Array<string | undefined> = [];
    for (let s = 0; s < this.slots; s++) {
      const id = this.ids[s];
      if (id === undefined) continue;
      const off = this.offsets[s]!;
      const len = preparedWords(this.arena[off]!);
      this.arena.copyWithin(w, off, off + len);
      const fo = this.featOffsets[s]!;
      const fc = this.featCounts[s]!;
      this.feats.copyWithin(fw, fo, fo + fc);
      this.dirs.copyWithin(fw, fo, fo + fc);
      this.featOffsets[slot] = fw;
      this.featCounts[slot] = fc;
      fw += fc;
      this.offsets[slot] = w;
      ids[slot] = id;
      this.slotOf.set(id, slot);
      w += len;
      slot++;
    }
    this.ids = ids;
    this.slots = slot;
    this.used = w;
    this.featsUsed = fw;
    this.dead = 0;
  }
}

/** The k-th largest value of `a` (1-based; reorders `a`). */
function kthLargest(a: Float32Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return a[target]!;
}
