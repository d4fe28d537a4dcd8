/**
 * The iris comparison kernel over 32-bit words, shared by the 1:1 matcher, the in-process 1:N
 * scan and the scan workers (the worker path runs exactly this code on shared memory).
 *
 * Layout. A gallery code is 128 words: words 0–63 are the code plane, 64–127 the mask plane, in
 * canonical bit order read as little-endian words (word w = columns 2w and 2w + 1). The gallery is
 * stored once, unshifted. Rotation is paid once per search on the probe side: the probe is laid
 * out in 2R + 1 rotated copies (one per shift), so for every shift the comparison is a contiguous,
 * word-aligned window over the same gallery words: a shift costs no bit shifting, no unaligned
 * access and no extra gallery bytes.
 *
 * Search cascade (1:N). Each gallery code also has an 8-word sketch (see `sketchWords`: the
 * inner four rings, the ones eyelids rarely reach, of 32 columns spread around the iris, 256
 * bits). Stage 1a takes, for every code, the smallest plain Hamming distance over all shifts on
 * half the sketch (128 bits; unrolled, carry-saving SWAR popcount) and keeps the best
 * max(16·K, n/64) by a histogram cut; stage 1b does the same on the whole sketch for those and
 * keeps the best K (`prefilter`); stage 2 scores the K exactly over all 2048 bits, with masks, at
 * every shift and ring offset (`RADIAL_SHIFT`). A candidate's score never depends on the prefilter: it only decides who is scored.
 *
 * Tested in test/unit/biometrics/iris/iris-match.test.ts (the 1:1 distances over the words it lays
 * out) and test/unit/biometrics/iris/iris-index.test.ts (the 1:N cascade, in-process and in the
 * workers).
 */
import { IRIS_CODE_BYTES, IRIS_COLUMN_BITS, type IrisCode } from './iris-code.js';

export const PLANE_WORDS = IRIS_CODE_BYTES / 4; // 64
export const CODE_WORDS = 2 * PLANE_WORDS; // 128: code then mask
export const SKETCH_WORDS = 8;
/**
 * Daugman's normalization reference: the number of bits compared in a typical pair of his codes
 * ("How iris recognition works", 2004). HDnorm = 0.5 − (0.5 − HDraw)·sqrt(n / 911), so a distance
 * measured over few bits is pulled towards 0.5 (weaker evidence) and one over many bits away from it.
 */
export const HD_NORMALIZATION_BITS = 911;
/** Fewer jointly valid bits than this and two codes are not compared (distance 1). */
export const MIN_BITS_COMPARED = 256;

/** Daugman's normalization, unclamped (it goes below 0 when many bits agree). */
export function normalizeHdRaw(hdRaw: number, bits: number): number {
  return 0.5 - (0.5 - hdRaw) * Math.sqrt(bits / HD_NORMALIZATION_BITS);
}

/**
 * Daugman's normalization, the distance reported and compared with thresholds, within 0..1: two
 * captures that agree on many bits would go below 0, which means nothing to anyone reading it, so
 * it stops at 0 (1 also means "not comparable"). The raw fraction and the bit count are kept beside
 * it, and ranking breaks ties at 0 on the unclamped value (`compareScores`), so a perfect match still
 * ranks before a strong one.
 */
export function normalizeHd(hdRaw: number, bits: number): number {
  const hd = normalizeHdRaw(hdRaw, bits);
  return Math.min(1, Math.max(0, hd));
}

/** Writes one code's 128 words (code plane then mask plane) at `out[offset]`. */
export function codeWords(c: IrisCode, out: Int32Array, offset = 0): void {
  planeToWords(c.code, out, offset);
  planeToWords(c.mask, out, offset + PLANE_WORDS);
}

function planeToWords(plane: Uint8Array, out: Int32Array, offset: number, rotateColumns = 0): void {
  const bytes = plane.length;
  const rot = ((((rotateColumns * IRIS_COLUMN_BITS) / 8) % bytes) + bytes) % bytes;
  for (let w = 0; w < PLANE_WORDS; w++) {
    const b = 4 * w + rot;
    out[offset + w] =
      plane[b % bytes]! | (plane[(b + 1) % bytes]! << 8) | (plane[(b + 2) % bytes]! << 16) | (plane[(b + 3) % bytes]! << 24);
  }
}

/**
 * The sketch of the code at `src[srcOffset]`, written at `out[outOffset]`: the inner four rings
 * (the low byte of a column) of every fourth column, 32 columns spread around the iris, 256 bits.
 * Word j byte b = low byte of code word 8j + 2b = column 16j + 4b.
 */
export function sketchWords(src: Int32Array, srcOffset: number, out: Int32Array, outOffset: number): void {
  for (let j = 0; j < SKETCH_WORDS; j++) {
    const w = srcOffset + 8 * j;
    out[outOffset + j] = (src[w]! & 0xff) | ((src[w + 2]! & 0xff) << 8) | ((src[w + 4]! & 0xff) << 16) | ((src[w + 6]! & 0xff) << 24);
  }
}

/**
 * The probe in 2R + 1 rotated copies. Copy j (shift s = j − R) holds at column a the probe's
 * column (a + s) mod 128: a gallery code that is the probe rotated by s columns matches copy j.
 * `exact` holds 128 words per copy, `sketch` 8 words per copy.
 */
export interface PreparedProbe {
  shiftCount: number;
  exact: Int32Array;
  sketch: Int32Array;
}

export function prepareProbe(c: IrisCode, shiftRange: number): PreparedProbe {
  const count = 2 * shiftRange + 1;
  const exact = new Int32Array(count * CODE_WORDS);
  const sketch = new Int32Array(count * SKETCH_WORDS);
  for (let j = 0; j < count; j++) {
    planeToWords(c.code, exact, j * CODE_WORDS, j - shiftRange);
    planeToWords(c.mask, exact, j * CODE_WORDS + PLANE_WORDS, j - shiftRange);
    sketchWords(exact, j * CODE_WORDS, sketch, j * SKETCH_WORDS);
  }
  return { shiftCount: count, exact, sketch };
}

export interface ExactScore {
  /** Normalized Hamming distance at the best shift (1 when too few bits are comparable). */
  hd: number;
  hdRaw: number;
  bits: number;
  /** Shift in columns (probe column a + shift ↔ gallery column a). */
  shift: number;
}

/**
 * Rings tried on each side by the exact score (radial search): the probe's ring r is also
 * compared with the gallery's ring r ± 1, the rings that fall off either edge left out. A pupil
 * that dilated between captures or a boundary found a little off moves the iris texture along ρ;
 * at 8 rings one ring is 11 % of the iris width. The normalization by the bits compared (7/8 of
 * them at a one-ring offset) does not make up for the extra alignments: see `RADIAL_SHIFT_COST`.
 */
export const RADIAL_SHIFT = 1;

/**
 * What a ring offset must gain to be chosen: the best alignment at an offset ≠ 0 is taken only
 * when its normalized distance is more than this below the best at offset 0 (the distance reported
 * is then that alignment's own, unpenalized). The offsets triple the alignments tried, and an
 * impostor pair's best of three times as many draws is closer by chance; a genuine pair whose rings
 * really moved gains more than this (the tune halves' worst such pair: 0.42 unshifted, 0.32 at an
 * offset). Chosen on the tune
 * halves of the four real iris folders (issue 26): at 0 the pooled FNMR at FMR 1e-3 was 0.78 % and
 * the FMR at the default threshold 0.32 was 0.050 %; from 0.05 to 0.1 they are 0.47 % and 0.014 %,
 * the genuine distances unchanged but for a handful of pairs, the EER the same.
 */
export const RADIAL_SHIFT_COST = 0.07;

/** A column's 16 bits are ring-major (ring r = bits 2r, 2r + 1): the masks that keep a ring shift inside each column. */
const RING_UP_KEEP = 0x3fff3fff; // after >>> 2: the last ring of each column empties
const RING_DOWN_KEEP = 0xfffcfffc | 0; // after << 2: the first ring of each column empties

/** Exact score of the gallery code at `g[base]` against a prepared probe, over every column shift and ring offset. */
export function exactScore(g: Int32Array, base: number, p: PreparedProbe): ExactScore {
  const probe = p.exact;
  const shiftCount = p.shiftCount;
  let best = 2;
  let bestRaw = 1;
  let bestBits = 0;
  let bestShift = 0;
  let bestRing = 0;
  const range = (shiftCount - 1) >> 1;
  for (let dr = -RADIAL_SHIFT; dr <= RADIAL_SHIFT; dr++) {
    // Gallery ring r + dr faces the probe's ring r: the gallery's words moved once per offset.
    let gw = g,
      gb = base;
    if (dr !== 0) {
      for (let w = 0; w < CODE_WORDS; w++) RING_SHIFTED[w] = ringShift(g[base + w]!, dr);
      gw = RING_SHIFTED;
      gb = 0;
    }
    for (let j = 0; j < shiftCount; j++) {
      const pb = j * CODE_WORDS;
      let d = 0;
      let n = 0;
      // Carry-saving popcount: two words to 4-bit counts, summed into byte counts over 16 words
      // (at most 8 × 16 = 128 per byte), then folded. Same result as a popcount per word.
      for (let w0 = 0; w0 < PLANE_WORDS; w0 += 16) {
        let accD = 0;
        let accN = 0;
        for (let w = w0; w < w0 + 16; w += 2) {
          const m1 = gw[gb + PLANE_WORDS + w]! & probe[pb + PLANE_WORDS + w]!;
          const m2 = gw[gb + PLANE_WORDS + w + 1]! & probe[pb + PLANE_WORDS + w + 1]!;
          let x1 = (gw[gb + w]! ^ probe[pb + w]!) & m1;
          let x2 = (gw[gb + w + 1]! ^ probe[pb + w + 1]!) & m2;
          x1 = x1 - ((x1 >>> 1) & 0x55555555);
          x1 = (x1 & 0x33333333) + ((x1 >>> 2) & 0x33333333);
          x2 = x2 - ((x2 >>> 1) & 0x55555555);
          x2 = (x2 & 0x33333333) + ((x2 >>> 2) & 0x33333333);
          x1 += x2;
          accD += (x1 & 0x0f0f0f0f) + ((x1 >>> 4) & 0x0f0f0f0f);
          let y1 = m1 - ((m1 >>> 1) & 0x55555555);
          y1 = (y1 & 0x33333333) + ((y1 >>> 2) & 0x33333333);
          let y2 = m2 - ((m2 >>> 1) & 0x55555555);
          y2 = (y2 & 0x33333333) + ((y2 >>> 2) & 0x33333333);
          y1 += y2;
          accN += (y1 & 0x0f0f0f0f) + ((y1 >>> 4) & 0x0f0f0f0f);
        }
        accD = (accD & 0x00ff00ff) + ((accD >>> 8) & 0x00ff00ff);
        d += (accD & 0xffff) + (accD >>> 16);
        accN = (accN & 0x00ff00ff) + ((accN >>> 8) & 0x00ff00ff);
        n += (accN & 0xffff) + (accN >>> 16);
      }
      if (n < MIN_BITS_COMPARED) continue;
      const raw = d / n;
      // The shift is chosen on the unclamped value, so two strong matches still rank apart; a ring
      // offset pays RADIAL_SHIFT_COST to be chosen.
      const cost = normalizeHdRaw(raw, n) + (dr === 0 ? 0 : RADIAL_SHIFT_COST);
      // Ties go to the smallest |shift| and ring offset, so an unrotated pair reports shift 0.
      const s = j - range;
      if (cost < best || (cost === best && (Math.abs(dr) < Math.abs(bestRing) || (dr === bestRing && Math.abs(s) < Math.abs(bestShift))))) {
        best = cost;
        bestRaw = raw;
        bestBits = n;
        bestShift = s;
        bestRing = dr;
      }
    }
  }
  if (best > 1) return { hd: 1, hdRaw: 1, bits: bestBits, shift: 0 };
  return { hd: normalizeHd(bestRaw, bestBits), hdRaw: bestRaw, bits: bestBits, shift: bestShift };
}

/** The gallery's code and mask words moved by a ring offset (one search at a time per thread). */
const RING_SHIFTED = new Int32Array(CODE_WORDS);

/** A gallery word (two columns) with its rings moved by `dr` (−1, 0 or 1): gallery ring r + dr lands on ring r. */
function ringShift(w: number, dr: number): number {
  return dr === 0 ? w : dr > 0 ? (w >>> (2 * dr)) & RING_UP_KEEP : (w << (-2 * dr)) & RING_DOWN_KEEP;
}

/** Orders two exact scores, best first: by reported distance, then by the unclamped one (which differs only at 0 and above 1). */
export function compareScores(a: ExactScore, b: ExactScore): number {
  return a.hd - b.hd || normalizeHdRaw(a.hdRaw, a.bits) - normalizeHdRaw(b.hdRaw, b.bits);
}

export interface ScanResult {
  /** Gallery slots of the candidates, best first. */
  slots: Int32Array;
  hd: Float64Array;
  hdRaw: Float64Array;
  shift: Int32Array;
  bits: Int32Array;
}

/** The score at which the `keep` smallest of `scores` end (a counting pass over a histogram). */
function cutScore(scores: Uint16Array, count: number, keep: number, maxScore: number): number {
  const hist = new Int32Array(maxScore + 2);
  for (let i = 0; i < count; i++) hist[scores[i]!]!++;
  let cut = 0;
  for (let total = 0; cut <= maxScore; cut++) {
    total += hist[cut]!;
    if (total >= keep) break;
  }
  return cut;
}

/** Indexes of exactly min(keep, count) smallest scores; ties at the cut go to the lowest index. */
function pickSmallest(scores: Uint16Array, count: number, keep: number, maxScore: number): number[] {
  const cut = cutScore(scores, count, keep, maxScore);
  const out: number[] = [];
  for (let i = 0; i < count; i++) if (scores[i]! < cut) out.push(i);
  for (let i = 0; i < count && out.length < keep; i++) if (scores[i] === cut) out.push(i);
  return out;
}

/**
 * Stage 1a: 128 sketch bits (sketch words 0, 2, 4, 6) at every shift for all slots [start, end);
 * stage 1b: the full 256-bit sketch for the best `max(16·prefilter, n/64)`; stage 2: exact scores
 * for the best `prefilter` of those. Returns the exact candidates with hd ≤ threshold, best first,
 * at most `limit`. With `prefilter` ≥ the slot count every slot is scored exactly. `scratch`
 * (reused across searches) holds the stage-1a scores when given.
 */
export function scanRange(
  g: Int32Array,
  sk: Int32Array,
  start: number,
  end: number,
  probe: PreparedProbe,
  prefilter: number,
  threshold: number,
  limit: number,
  scratch?: Uint16Array,
): ScanResult {
  const count = Math.max(0, end - start);
  // The caller's scratch when it is large enough: a search allocates no score array of its own.
  const coarse = scratch && scratch.length >= count ? scratch.subarray(0, count) : new Uint16Array(count);
  if (Math.min(prefilter, count) < count) coarseScores(sk, start, end, probe, coarse, start);
  return finishScan(g, sk, coarse, start, end, probe, prefilter, threshold, limit);
}

/**
 * Stage 1a for slots [start, end): the smallest Hamming distance over all shifts between 128
 * sketch bits (sketch words 0, 2, 4, 6), written at `out[slot − outBase]`. Independent per slot,
 * so slices of a gallery can be computed by different threads into one shared array.
 */
export function coarseScores(sk: Int32Array, start: number, end: number, probe: PreparedProbe, out: Uint16Array, outBase: number): void {
  const ps = probe.sketch;
  const shifts = probe.shiftCount;
  for (let t = start; t < end; t++) {
    const b = t * 8;
    const g0 = sk[b]!,
      g2 = sk[b + 2]!,
      g4 = sk[b + 4]!,
      g6 = sk[b + 6]!;
    let best = 0xffff;
    for (let j = 0, pb = 0; j < shifts; j++, pb += 8) {
      // Two words at a time to 4-bit counts, pairs summed to byte counts, bytes summed last.
      let a = g0 ^ ps[pb]!,
        c = g2 ^ ps[pb + 2]!;
      a = a - ((a >>> 1) & 0x55555555);
      a = (a & 0x33333333) + ((a >>> 2) & 0x33333333);
      c = c - ((c >>> 1) & 0x55555555);
      c = (c & 0x33333333) + ((c >>> 2) & 0x33333333);
      a += c;
      let acc = (a & 0x0f0f0f0f) + ((a >>> 4) & 0x0f0f0f0f);
      a = g4 ^ ps[pb + 4]!;
      c = g6 ^ ps[pb + 6]!;
      a = a - ((a >>> 1) & 0x55555555);
      a = (a & 0x33333333) + ((a >>> 2) & 0x33333333);
      c = c - ((c >>> 1) & 0x55555555);
      c = (c & 0x33333333) + ((c >>> 2) & 0x33333333);
      a += c;
      acc += (a & 0x0f0f0f0f) + ((a >>> 4) & 0x0f0f0f0f);
      acc = (acc & 0x00ff00ff) + ((acc >>> 8) & 0x00ff00ff);
      const d = (acc & 0xffff) + (acc >>> 16);
      if (d < best) best = d;
    }
    out[t - outBase] = best;
  }
}

/**
 * Shared state of split searches (one Int32Array on a SharedArrayBuffer, reused search after
 * search): the header, then one state per chunk (0 free, 1 claimed, 2 done). The probe's sketch
 * copies and the stage-1a scores live in two more shared arrays reused the same way, so a search
 * allocates no shared memory and posts the workers nothing but "search now".
 */
export const S_COUNTER = 0; // next chunk to claim
export const S_CANCEL = 1; // 1: the search is over (or not started): claim nothing
export const S_BY_WORKERS = 2; // chunks the workers finished
export const S_WAKE = 3; // bumped and notified per chunk a worker finishes
export const S_GEN = 4; // search number: a worker holding another one stops
export const S_ACTIVE = 5; // workers inside a search now: the buffers are reused only at 0
export const S_N = 6; // gallery size of this search
export const S_CHUNK = 7; // slots per chunk
export const S_SHIFTS = 8; // shift count of the probe
export const S_GALLERY = 9; // version of the gallery buffers the search reads
export const CHUNK_HEADER = 16;
/** A search is cut into at most this many chunks (chunk = max(256, ⌈n / 64⌉)). */
export const MAX_CHUNKS = 64;
export const STATE_WORDS = CHUNK_HEADER + MAX_CHUNKS;
/** Probe sketch words for the largest shift range (±32 columns). */
export const PROBE_SKETCH_WORDS = 65 * SKETCH_WORDS;

export function chunkSize(n: number): number {
  return Math.max(256, Math.ceil(n / MAX_CHUNKS));
}

/** The buffers one split search works on (shared with the workers). */
export interface SearchScratch {
  state: Int32Array;
  coarse: Uint16Array;
  probeSketch: Int32Array;
}

function computeChunk(sk: Int32Array, s: SearchScratch, c: number, n: number, chunk: number, probe: PreparedProbe): void {
  coarseScores(sk, c * chunk, Math.min(n, (c + 1) * chunk), probe, s.coarse, 0);
}

/**
 * A worker's part of the current search on `s`: claims chunks of stage 1a from the shared counter
 * until none is left, the search ends, or another search started; every parameter comes from the
 * shared state, never from the message that woke the worker (it may arrive late). While it works
 * it counts itself in S_ACTIVE, so the calling thread never resets these buffers under it.
 * `galleryVersion` is the version of the sketch buffer `sk` the worker holds.
 */
export function workerClaimChunks(sk: Int32Array, galleryVersion: number, s: SearchScratch): number {
  const state = s.state;
  let done = 0;
  Atomics.add(state, S_ACTIVE, 1);
  try {
    const gen = Atomics.load(state, S_GEN);
    for (;;) {
      if (Atomics.load(state, S_CANCEL) !== 0 || Atomics.load(state, S_GEN) !== gen || Atomics.load(state, S_GALLERY) !== galleryVersion)
        break;
      const n = Atomics.load(state, S_N);
      const chunk = Atomics.load(state, S_CHUNK);
      const c = Atomics.add(state, S_COUNTER, 1);
      if (c >= Math.ceil(n / chunk)) break;
      if (Atomics.compareExchange(state, CHUNK_HEADER + c, 0, 1) !== 0) continue;
      const shifts = Atomics.load(state, S_SHIFTS);
      computeChunk(sk, s, c, n, chunk, {
        shiftCount: shifts,
        sketch: s.probeSketch.subarray(0, shifts * SKETCH_WORDS),
        exact: EMPTY_WORDS,
      });
      Atomics.store(state, CHUNK_HEADER + c, 2);
      done++;
      Atomics.add(state, S_BY_WORKERS, 1);
      Atomics.add(state, S_WAKE, 1);
      Atomics.notify(state, S_WAKE);
    }
  } finally {
    Atomics.sub(state, S_ACTIVE, 1);
  }
  return done;
}

const EMPTY_WORDS = new Int32Array(0);

/** The calling thread's share: claims chunks from the shared counter like a worker. */
export function claimChunks(sk: Int32Array, s: SearchScratch, n: number, chunk: number, probe: PreparedProbe): number {
  const state = s.state;
  const total = Math.ceil(n / chunk);
  let done = 0;
  for (;;) {
    const c = Atomics.add(state, S_COUNTER, 1);
    if (c >= total) break;
    if (Atomics.compareExchange(state, CHUNK_HEADER + c, 0, 1) !== 0) continue;
    computeChunk(sk, s, c, n, chunk, probe);
    Atomics.store(state, CHUNK_HEADER + c, 2);
    done++;
  }
  return done;
}

/**
 * The calling thread computes every chunk not yet done, including chunks a worker claimed but has
 * not finished (a preempted worker never holds the search up; both write the same scores).
 */
export function stealChunks(sk: Int32Array, s: SearchScratch, n: number, chunk: number, probe: PreparedProbe): number {
  const total = Math.ceil(n / chunk);
  let done = 0;
  for (let c = 0; c < total; c++) {
    if (Atomics.load(s.state, CHUNK_HEADER + c) === 2) continue;
    Atomics.store(s.state, CHUNK_HEADER + c, 1);
    computeChunk(sk, s, c, n, chunk, probe);
    Atomics.store(s.state, CHUNK_HEADER + c, 2);
    done++;
  }
  return done;
}

/**
 * Stages 1b and 2 over slots [start, end) once `coarse[slot − start]` holds every stage-1a score:
 * the full sketch for the best max(16·K, n/64), exact scores for the best K of those.
 */
export function finishScan(
  g: Int32Array,
  sk: Int32Array,
  coarse: Uint16Array,
  start: number,
  end: number,
  probe: PreparedProbe,
  prefilter: number,
  threshold: number,
  limit: number,
): ScanResult {
  const count = Math.max(0, end - start);
  const k = Math.max(1, Math.min(prefilter, count));
  let chosen: Int32Array;
  if (k >= count) {
    chosen = new Int32Array(count);
    for (let i = 0; i < count; i++) chosen[i] = start + i;
  } else {
    const ps = probe.sketch;
    const shifts = probe.shiftCount;
    const keep1 = Math.min(count, Math.max(16 * k, Math.ceil(count / 64)));
    const stage1 = pickSmallest(coarse, count, keep1, 128).map((i) => start + i);
    const fine = new Uint16Array(stage1.length);
    for (let i = 0; i < stage1.length; i++) {
      const b = stage1[i]! * 8;
      let best = 0xffff;
      for (let j = 0, pb = 0; j < shifts; j++, pb += 8) {
        let d = 0;
        for (let w = 0; w < 8; w++) {
          let x = sk[b + w]! ^ ps[pb + w]!;
          x = x - ((x >>> 1) & 0x55555555);
          x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
          d += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
        }
        if (d < best) best = d;
      }
      fine[i] = best;
    }
    chosen = Int32Array.from(pickSmallest(fine, fine.length, k, 256), (i) => stage1[i]!);
  }
  const found: Array<{ slot: number; s: ExactScore }> = [];
  for (let i = 0; i < chosen.length; i++) {
    const slot = chosen[i]!;
    const s = exactScore(g, slot * CODE_WORDS, probe);
    if (s.hd <= threshold) found.push({ slot, s });
  }
  found.sort((a, b) => compareScores(a.s, b.s) || a.slot - b.slot);
  const n = Math.min(limit, found.length);
  const out: ScanResult = {
    slots: new Int32Array(n),
    hd: new Float64Array(n),
    hdRaw: new Float64Array(n),
    shift: new Int32Array(n),
    bits: new Int32Array(n),
  };
  for (let i = 0; i < n; i++) {
    out.slots[i] = found[i]!.slot;
    out.hd[i] = found[i]!.s.hd;
    out.hdRaw[i] = found[i]!.s.hdRaw;
    out.shift[i] = found[i]!.s.shift;
    out.bits[i] = found[i]!.s.bits;
  }
  return out;
}

/** Reads every word of `words[0, length)` once: the streaming floor the scan is compared with. */
export function streamWords(words: Int32Array, length = words.length): number {
  let acc = 0;
  for (let i = 0; i < length; i++) acc ^= words[i]!;
  return acc;
}
