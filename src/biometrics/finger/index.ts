/**
 * In-memory 1:N fingerprint index over typed arrays, built once from the template cache and updated
 * incrementally.
 *
 * Every template is prepared once (`prepareFinger`) and appended to one growing Uint16Array arena;
 * its prefilter features go to a second Uint16Array arena; per slot the index keeps only offsets
 * and lengths in flat typed arrays (no object per template). `identify` runs in two passes:
 * 1. prefilter: every minutia with two of its four nearest neighbours (five on the probe side)
 *    forms a small local structure, described (invariant to rotation and translation) by the two edge lengths
 *    (5 px bins), the angle between the edges, the first edge relative to the minutia's direction
 *    and the first neighbour's direction relative to it; the cell number (15 bits) is a feature.
 *    The probe sets its features in a 32 Kbit bitset, each also in the neighbouring bin of every
 *    dimension where it lies within 30 % of a bin boundary (so noise across a boundary still hits),
 *    and weights each set cell by its rarity over the index (idf, log(features / templates'
 *    features in the cell)); a template's prefilter score is the mean weight its (6 per
 *    minutia) features hit: one table read per feature (the mean, not the sum, so big templates
 *    do not crowd out the rest). The best `candidates` go on.
 * 2. full comparison of the probe (prepared and bucketed once) with each candidate; the results at
 *    or above `threshold` are returned best first.
 * Removing marks the slot dead; the arenas are compacted when a third is dead.
 */
import { FingerProbe, compareProbe, edgeLayout, prepareFinger, EDGES_PER_MINUTIA, type PreparedFinger } from './matcher.js';
import type { FingerTemplate } from './template.js';
import { count, idsFromBytes, idsToBytes, positions, type SnapshotLoad, type SnapshotPart } from '../snapshot-part.js';

/**
 * Layout of the index in a snapshot: the prepared templates (`prepareFinger`) and the prefilter
 * features as they are. Bump it whenever `prepareFinger`, the edge layout or the prefilter cells
 * change, or a snapshot would hand the matcher data of another shape.
 */
export const FINGER_SNAPSHOT_FORMAT = 'finger-index/1';

const CELL_BITS = 15;
const PAIRS: ReadonlyArray<readonly [number, number]> = [
  [0, 1],
  [0, 2],
  [1, 2],
  [0, 3],
  [1, 3],
  [2, 3],
];
/** The probe also uses the pairs with its fifth neighbour: a missing or spurious neighbour on
 * either side then still leaves matching structures (recall of the mate in the best 2.5 % of
 * 3,000: 0.80 with 3 pairs on both sides, 0.91 with 6 stored and 10 on the probe side). */
const PROBE_PAIRS: ReadonlyArray<readonly [number, number]> = [...PAIRS, [0, 4], [1, 4], [2, 4], [3, 4]];

interface LocalStructure {
  la: number;
  lb: number;
  delta: number;
  b1: number;
  b2: number;
}

function localStructures(p: PreparedFinger, pairs: ReadonlyArray<readonly [number, number]>, fn: (s: LocalStructure) => void): void {
  const d = p.data;
  const { edgeBase, n, k } = edgeLayout(d, p.offset);
  for (let i = 0; i < n; i++) {
    const o = edgeBase + i * EDGES_PER_MINUTIA * 2;
    for (const [ea, eb] of pairs) {
      if (eb >= k) continue;
      let wa0 = d[o + ea * 2]!;
      let wa1 = d[o + ea * 2 + 1]!;
      let wb0 = d[o + eb * 2]!;
      let wb1 = d[o + eb * 2 + 1]!;
      // Canonical order: the second edge lies counter-clockwise within 180° of the first.
      let delta = ((wb1 & 255) - (wa1 & 255)) & 255;
      if (delta >= 128) {
        [wa0, wb0] = [wb0, wa0];
        [wa1, wb1] = [wb1, wa1];
        delta = 256 - delta;
      }
      fn({ la: wa0 >> 8, lb: wb0 >> 8, delta, b1: wa1 & 255, b2: wa1 >> 8 });
    }
  }
}

/** Bins of one structure per dimension: [own bin, nearest other bin] (cells are 15 bits). */
function cellOf(la: number, lb: number, dl: number, a1: number, a2: number): number {
  return ((((la * 16 + lb) * 8 + dl) * 8 + a1) * 2 + a2) & ((1 << CELL_BITS) - 1);
}

/** A value is widened into the neighbouring bin only when it lies this close to the boundary. */
const WIDEN = 0.3;

function linBins(v: number, width: number, count: number): number[] {
  const b = Math.min(count - 1, Math.floor(v / width));
  const r = (v - b * width) / width;
  if (r < WIDEN && b > 0) return [b, b - 1];
  if (r > 1 - WIDEN && b < count - 1) return [b, b + 1];
  return [b];
}

function circBins(v: number, width: number, count: number, shift: number): number[] {
  const u = (v + shift) & 255;
  const b = Math.floor(u / width) % count;
  const r = (u - Math.floor(u / width) * width) / width;
  if (r < WIDEN) return [b, (b - 1 + count) % count];
  if (r > 1 - WIDEN) return [b, (b + 1) % count];
  return [b];
}

function binsOf(s: LocalStructure): number[][] {
  return [linBins(s.la, 5, 16), linBins(s.lb, 5, 16), linBins(s.delta, 16, 8), circBins(s.b1, 32, 8, 0), circBins(s.b2, 128, 2, 64)];
}

/** The prefilter features (exact cells) of a prepared template. */
export function prefilterFeatures(p: PreparedFinger): Uint16Array {
  const out: number[] = [];
  localStructures(p, PAIRS, (s) => {
    const [a, b, c, d, e] = binsOf(s);
    out.push(cellOf(a![0], b![0], c![0], d![0], e![0]));
  });
  return Uint16Array.from(out);
}

/** The probe's feature bitset (each feature also in the neighbouring bins it lies close to). */
export function prefilterBitset(p: PreparedFinger): Uint32Array {
  const bits = new Uint32Array((1 << CELL_BITS) >> 5);
  localStructures(p, PROBE_PAIRS, (s) => {
    const [a, b, c, d, e] = binsOf(s);
    for (const x1 of a!)
      for (const x2 of b!)
        for (const x3 of c!)
          for (const x4 of d!)
            for (const x5 of e!) {
              const cell = cellOf(x1, x2, x3, x4, x5);
              bits[cell >> 5]! |= 1 << (cell & 31);
            }
  });
  return bits;
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
  private lengths = new Int32Array(0);
  private feats = new Uint16Array(1 << 14);
  private featsUsed = 0;
  private featOffsets = new Int32Array(0);
  private featCounts = new Uint16Array(0);
  /** How many templates' features fall in each cell (for the idf weights of the prefilter). */
  private cellFreq = new Int32Array(1 << CELL_BITS);
  private ids: Array<string | undefined> = [];
  private slotOf = new Map<string, number>();
  private prefilterScores = new Float32Array(0);
  /** Per-search buffers, reused: the probe's cell weights (reset after each search) and the selection copy. */
  private readonly weight = new Float32Array(1 << CELL_BITS);
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
      const next = new Uint16Array(Math.max(this.arena.length * 2, this.used + words));
      next.set(this.arena.subarray(0, this.used));
      this.arena = next;
    }
    this.arena.set(p.data, this.used);
    if (this.slots === this.capacity) this.growSlots(Math.max(64, this.capacity * 2));
    const s = this.slots++;
    this.offsets[s] = this.used;
    this.lengths[s] = words;
    const f = prefilterFeatures(p);
    if (this.featsUsed + f.length > this.feats.length) {
      const next = new Uint16Array(Math.max(this.feats.length * 2, this.featsUsed + f.length));
      next.set(this.feats.subarray(0, this.featsUsed));
      this.feats = next;
    }
    for (const c of f) this.cellFreq[c]!++;
    this.feats.set(f, this.featsUsed);
    this.featOffsets[s] = this.featsUsed;
    this.featCounts[s] = f.length;
    this.featsUsed += f.length;
    this.ids[s] = id;
    this.slotOf.set(id, s);
    this.used += words;
  }

  /** The index for a snapshot (compacted first): ids, prepared arena, slot arrays, features, cell counts. */
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
        this.lengths.subarray(0, n),
        this.feats.subarray(0, this.featsUsed),
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
    const cap = Math.max(n, 64);
    const offsets = new Int32Array(cap);
    const lengths = new Int32Array(cap);
    const featOffsets = new Int32Array(cap);
    const featCounts = new Uint16Array(cap);
    const cellFreq = new Int32Array(1 << CELL_BITS);
    return {
      targets: [
        ids,
        arena.subarray(0, used),
        offsets.subarray(0, n),
        lengths.subarray(0, n),
        feats.subarray(0, featsUsed),
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
          lengths,
          feats,
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
    if (p.data.length !== this.lengths[s]) return false;
    const off = this.offsets[s]!;
    for (let i = 0; i < p.data.length; i++) if (p.data[i] !== this.arena[off + i]) return false;
    const f = prefilterFeatures(p);
    if (f.length !== this.featCounts[s]) return false;
    for (let i = 0, q = this.featOffsets[s]!; i < f.length; i++, q++) if (f[i] !== this.feats[q]) return false;
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
    this.dead += this.lengths[s]!;
    for (let q = this.featOffsets[s]!, e = q + this.featCounts[s]!; q < e; q++) this.cellFreq[this.feats[q]!]!--;
    if (this.dead > this.used / 3) this.compact();
    return true;
  }

  /** 1:N identification: prefilter everything, fully compare the best candidates. */
  identify(probe: FingerTemplate, options: IdentifyOptions = {}): IdentifyResult[] {
    const threshold = options.threshold ?? 40;
    const wanted = Math.max(1, options.candidates ?? DEFAULT_CANDIDATES);
    const prepared = prepareFinger(probe);
    const fp = new FingerProbe(prepared);
    const bits = prefilterBitset(prepared);
    // idf: a cell many templates share says little; weight each probe cell by its rarity. The
    // weight table is the index's own, zero outside the probe's cells (reset below).
    const weight = this.weight;
    const total = Math.max(1, this.featsUsed);
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w]!;
      while (word !== 0) {
        const bit = 31 - Math.clz32(word & -word);
        word &= word - 1;
        const c = (w << 5) | bit;
        weight[c] = Math.log((total + 1) / (this.cellFreq[c]! + 1));
      }
    }
    const slots = this.slots;
    if (this.prefilterScores.length < slots) this.prefilterScores = new Float32Array(this.capacity);
    const scores = this.prefilterScores;
    const feats = this.feats;
    let alive = 0;
    for (let s = 0; s < slots; s++) {
      if (this.ids[s] === undefined) {
        scores[s] = -1;
        continue;
      }
      alive++;
      const start = this.featOffsets[s]!;
      const end = start + this.featCounts[s]!;
      let sum = 0;
      for (let q = start; q < end; q++) sum += weight[feats[q]!]!;
      scores[s] = end > start ? sum / (end - start) : 0;
    }
    // Selection of the top `wanted` prefilter scores: the wanted-th largest by quickselect.
    let cutoff = -Infinity;
    if (alive > wanted) {
      if (this.selection.length < alive) this.selection = new Float32Array(this.capacity);
      const copy = this.selection.subarray(0, alive);
      let c = 0;
      for (let s = 0; s < slots; s++) if (scores[s]! >= 0) copy[c++] = scores[s]!;
      cutoff = kthLargest(copy, wanted);
    }
    const results: IdentifyResult[] = [];
    let compared = 0;
    for (let s = 0; s < slots && compared < wanted; s++) {
      if (scores[s]! < 0 || scores[s]! < cutoff) continue;
      compared++;
      const score = compareProbe(fp, { data: this.arena, offset: this.offsets[s]! });
      if (score >= threshold) results.push({ id: this.ids[s]!, score });
    }
    results.sort((a, b) => b.score - a.score);
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w]!;
      while (word !== 0) {
        weight[(w << 5) | (31 - Math.clz32(word & -word))] = 0;
        word &= word - 1;
      }
    }
    return results;
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
      this.lengths.byteLength +
      this.feats.byteLength +
      this.cellFreq.byteLength +
      this.featOffsets.byteLength +
      this.featCounts.byteLength +
      this.prefilterScores.byteLength +
      this.weight.byteLength +
      this.selection.byteLength +
      this.ids.length * 8;
    return Math.round((typed + idBytes) / n);
  }

  private growSlots(capacity: number): void {
    const offsets = new Int32Array(capacity);
    offsets.set(this.offsets.subarray(0, this.slots));
    const lengths = new Int32Array(capacity);
    lengths.set(this.lengths.subarray(0, this.slots));
    const featOffsets = new Int32Array(capacity);
    featOffsets.set(this.featOffsets.subarray(0, this.slots));
    const featCounts = new Uint16Array(capacity);
    featCounts.set(this.featCounts.subarray(0, this.slots));
    this.offsets = offsets;
    this.lengths = lengths;
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
      const len = this.lengths[s]!;
      this.arena.copyWithin(w, off, off + len);
      const fo = this.featOffsets[s]!;
      const fc = this.featCounts[s]!;
      this.feats.copyWithin(fw, fo, fo + fc);
      this.featOffsets[slot] = fw;
      this.featCounts[slot] = fc;
      fw += fc;
      this.offsets[slot] = w;
      this.lengths[slot] = len;
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
