/**
 * Minutiae matcher: local edge structures, root pairs from the best local matches, pairings grown
 * by breadth-first search from each root, a calibrated score.
 *
 * 1. `prepareFinger` turns a template ONCE into a compact Uint16Array: per minutia x, y, angle
 *    (256 units per turn) and type; per minutia its K = 8 nearest-neighbour edges, each
 *    (neighbour, length in px, β₁ = direction of the edge − own direction, β₂ = neighbour
 *    direction − own direction). Lengths and relative angles are invariant to rotation and
 *    translation and change little under local distortion.
 * 2. A probe gets a bucket table of its edges (length bins of 10 px × two angle bins of 45°, each
 *    edge written into the 2×2×2 buckets nearest it, so any edge within 5 px / 22.5° of it is
 *    found by one bucket read). Every candidate edge looks up its bucket; each compatible edge
 *    pair votes for its two minutia pairs.
 * 3. The best-voted minutia pairs are roots. From each root a pairing grows breadth-first: for a
 *    paired (i, k), each edge i→j is matched to the most similar unpaired edge k→l within the
 *    tolerances, pairing (j, l). Edges whose both ends are paired consistently are "supporting".
 * 4. The raw score of the best root is built from the paired count, the supporting edges and the
 *    fraction of each template that was paired; `calibrateScore` maps it onto
 *    −10·log10(FMR) measured on a large synthetic impostor set (see finger-calibration.ts).
 */
import type { FingerTemplate } from './template.js';
import { calibrateScore } from './finger-calibration.js';

export const EDGES_PER_MINUTIA = 6;
/** At most this many minutiae are kept (the best quality first); a record holds up to 255. */
export const MAX_MINUTIAE = 128;
const HEADER_WORDS = 2;
const MINUTIA_WORDS = 3;
const EDGE_WORDS = 2;
const TWO_PI = 2 * Math.PI;

/** A template prepared for matching: all numbers in one Uint16Array (see the module comment). */
export interface PreparedFinger {
  readonly data: Uint16Array;
  readonly offset: number;
}

/** Words a prepared template of n minutiae takes. */
export function preparedWords(n: number): number {
  return HEADER_WORDS + n * (MINUTIA_WORDS + EDGE_WORDS * EDGES_PER_MINUTIA);
}

function angle256(a: number): number {
  let r = a % TWO_PI;
  if (r < 0) r += TWO_PI;
  return Math.round((r / TWO_PI) * 256) & 255;
}

/** Prepares a template once (O(n²)); the result is what the matcher and the index store. */
export function prepareFinger(t: FingerTemplate): PreparedFinger {
  let ms = t.minutiae;
  if (ms.length > MAX_MINUTIAE) ms = [...ms].sort((a, b) => b.quality - a.quality).slice(0, MAX_MINUTIAE);
  const n = ms.length;
  const K = Math.min(EDGES_PER_MINUTIA, Math.max(0, n - 1));
  const data = new Uint16Array(preparedWords(n));
  data[0] = n;
  data[1] = K;
  const ang = ms.map((m) => angle256(m.angle));
  for (let i = 0; i < n; i++) {
    const m = ms[i]!;
    const o = HEADER_WORDS + i * MINUTIA_WORDS;
    data[o] = Math.max(0, Math.min(0xffff, Math.round(m.x)));
    data[o + 1] = Math.max(0, Math.min(0xffff, Math.round(m.y)));
    data[o + 2] = ang[i]! | ((m.type === 'ending' ? 1 : m.type === 'bifurcation' ? 2 : 0) << 8);
  }
  const eBase = HEADER_WORDS + n * MINUTIA_WORDS;
  const d2 = new Float64Array(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const mi = ms[i]!;
    for (let j = 0; j < n; j++) {
      d2[j] = j === i ? Infinity : (ms[j]!.x - mi.x) ** 2 + (ms[j]!.y - mi.y) ** 2;
      order[j] = j;
    }
    order.sort((a, b) => d2[a]! - d2[b]!);
    for (let e = 0; e < K; e++) {
      const j = order[e]!;
      const mj = ms[j]!;
      const len = Math.min(255, Math.round(Math.sqrt(d2[j]!)));
      // Edge direction in the ISO convention (counter-clockwise as seen, y down).
      const dir = angle256(Math.atan2(-(mj.y - mi.y), mj.x - mi.x));
      const b1 = (dir - ang[i]!) & 255;
      const b2 = (ang[j]! - ang[i]!) & 255;
      const o = eBase + (i * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
      data[o] = j | (len << 8);
      data[o + 1] = b1 | (b2 << 8);
    }
  }
  return { data, offset: 0 };
}

// ---- probe edge buckets ------------------------------------------------------------------------

const LEN_BIN = 10;
const LEN_BINS = 26;
const ANG_BINS = 8; // 32 units (45°) each
/** Number of edge buckets (length × β₁ × β₂ bins). */
export const BUCKETS = LEN_BINS * ANG_BINS * ANG_BINS;
/** Tolerances of an edge match (guaranteed findable by the bucket layout: ≤ half a bin). */
const TOL_LEN = 5;
const TOL_ANG = 16;
/** Tolerances when growing a pairing (looser: the root already anchors it). */
const GROW_TOL_LEN = 7;
const GROW_TOL_ANG = 20;

/** The bucket of an edge (length px, β₁, β₂ in 256 units per turn). */
export function bucketOf(len: number, b1: number, b2: number): number {
  return (Math.min(LEN_BINS - 1, (len / LEN_BIN) | 0) * ANG_BINS + (b1 >> 5)) * ANG_BINS + (b2 >> 5);
}

/** A probe ready to be compared with many candidates: its prepared form plus its edge buckets. */
export class FingerProbe {
  readonly prepared: PreparedFinger;
  readonly n: number;
  /** CSR bucket table: start offsets (BUCKETS + 1) and edge references (i * EDGES_PER_MINUTIA + e). */
  readonly bucketStart: Int32Array;
  readonly bucketEdges: Uint16Array;

  constructor(prepared: PreparedFinger) {
    this.prepared = prepared;
    const d = prepared.data;
    const base = prepared.offset;
    const n = d[base]!;
    const K = d[base + 1]!;
    this.n = n;
    const eBase = base + HEADER_WORDS + n * MINUTIA_WORDS;
    const keys: number[] = [];
    const refs: number[] = [];
    for (let i = 0; i < n; i++) {
      for (let e = 0; e < K; e++) {
        const o = eBase + (i * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
        const len = d[o]! >> 8;
        const b1 = d[o + 1]! & 255;
        const b2 = d[o + 1]! >> 8;
        const lb = Math.min(LEN_BINS - 1, (len / LEN_BIN) | 0);
        const lRem = len - lb * LEN_BIN;
        const lbs = [lb];
        if (lRem < LEN_BIN / 2 && lb > 0) lbs.push(lb - 1);
        else if (lRem >= LEN_BIN / 2 && lb < LEN_BINS - 1) lbs.push(lb + 1);
        const a1 = [b1 >> 5, (((b1 & 31) < 16 ? (b1 >> 5) - 1 : (b1 >> 5) + 1) + ANG_BINS) % ANG_BINS];
        const a2 = [b2 >> 5, (((b2 & 31) < 16 ? (b2 >> 5) - 1 : (b2 >> 5) + 1) + ANG_BINS) % ANG_BINS];
        for (const l of lbs) for (const x of a1) for (const y of a2) {
          keys.push((l * ANG_BINS + x) * ANG_BINS + y);
          refs.push(i * EDGES_PER_MINUTIA + e);
        }
      }
    }
    const start = new Int32Array(BUCKETS + 1);
    for (const k of keys) start[k + 1]!++;
    for (let b = 0; b < BUCKETS; b++) start[b + 1]! += start[b]!;
    const fill = start.slice(0, BUCKETS);
    const edges = new Uint16Array(keys.length);
    for (let q = 0; q < keys.length; q++) edges[fill[keys[q]!]!++] = refs[q]!;
    this.bucketStart = start;
    this.bucketEdges = edges;
  }
}

// ---- comparison scratch (single-threaded, reused) -------------------------------------------

let scratchSize = 0;
let votes = new Uint16Array(0);
let touched = new Int32Array(0);
let pairA = new Int16Array(0);
let pairB = new Int16Array(0);
let queueA = new Int16Array(0);
let queueB = new Int16Array(0);

function ensureScratch(nA: number, nB: number): void {
  const need = Math.max(nA, nB, 1);
  if (need <= scratchSize) return;
  scratchSize = Math.max(need, 128);
  votes = new Uint16Array(scratchSize * scratchSize);
  touched = new Int32Array(scratchSize * scratchSize);
  pairA = new Int16Array(scratchSize).fill(-1);
  pairB = new Int16Array(scratchSize).fill(-1);
  queueA = new Int16Array(scratchSize);
  queueB = new Int16Array(scratchSize);
}

const MAX_ROOTS = 4;
/** Only a candidate minutia's nearest VOTE_EDGES edges vote for roots (all K are used to grow). */
const VOTE_EDGES = 3;
const rootIdx = new Int32Array(MAX_ROOTS);
const rootVotes = new Int32Array(MAX_ROOTS);

export interface MatchDetail {
  raw: number;
  paired: number;
  supporting: number;
  score: number;
}

function circ(a: number, b: number): number {
  const d = (a - b) & 255;
  return d > 128 ? 256 - d : d;
}

/** Compares a probe with one prepared candidate; the raw (uncalibrated) figures. */
export function matchDetail(probe: FingerProbe, cand: PreparedFinger): MatchDetail {
  const pd = probe.prepared.data;
  const pBase = probe.prepared.offset;
  const nA = probe.n;
  const cd = cand.data;
  const cBase = cand.offset;
  const nB = cd[cBase]!;
  const KB = cd[cBase + 1]!;
  const KA = pd[pBase + 1]!;
  if (nA < 2 || nB < 2) return { raw: 0, paired: 0, supporting: 0, score: 0 };
  ensureScratch(nA, nB);
  const pE = pBase + HEADER_WORDS + nA * MINUTIA_WORDS;
  const cE = cBase + HEADER_WORDS + nB * MINUTIA_WORDS;
  const bStart = probe.bucketStart;
  const bEdges = probe.bucketEdges;

  // 1. votes from compatible edge pairs
  let nTouched = 0;
  const KV = KB < VOTE_EDGES ? KB : VOTE_EDGES;
  for (let k = 0; k < nB; k++) {
    for (let e = 0; e < KV; e++) {
      const o = cE + (k * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
      const w0 = cd[o]!;
      const w1 = cd[o + 1]!;
      const len = w0 >> 8;
      const b1 = w1 & 255;
      const b2 = w1 >> 8;
      const key = bucketOf(len, b1, b2);
      const end = bStart[key + 1]!;
      for (let q = bStart[key]!; q < end; q++) {
        const ref = bEdges[q]!;
        const po = pE + ref * EDGE_WORDS;
        const pw0 = pd[po]!;
        const pw1 = pd[po + 1]!;
        const dl = (pw0 >> 8) - len;
        if (dl > TOL_LEN || dl < -TOL_LEN) continue;
        if (circ(pw1 & 255, b1) > TOL_ANG || circ(pw1 >> 8, b2) > TOL_ANG) continue;
        const i = (ref / EDGES_PER_MINUTIA) | 0;
        const j = pw0 & 255;
        const l = w0 & 255;
        const v1 = i * nB + k;
        if (votes[v1]++ === 0) touched[nTouched++] = v1;
        const v2 = j * nB + l;
        if (votes[v2]++ === 0) touched[nTouched++] = v2;
      }
    }
  }

  // 2. the best-voted minutia pairs are the roots
  let nRoots = 0;
  for (let t = 0; t < nTouched; t++) {
    const idx = touched[t]!;
    const v = votes[idx]!;
    votes[idx] = 0;
    if (v < 2) continue;
    if (nRoots < MAX_ROOTS) {
      let p = nRoots++;
      while (p > 0 && rootVotes[p - 1]! < v) { rootVotes[p] = rootVotes[p - 1]!; rootIdx[p] = rootIdx[p - 1]!; p--; }
      rootVotes[p] = v; rootIdx[p] = idx;
    } else if (v > rootVotes[MAX_ROOTS - 1]!) {
      let p = MAX_ROOTS - 1;
      while (p > 0 && rootVotes[p - 1]! < v) { rootVotes[p] = rootVotes[p - 1]!; rootIdx[p] = rootIdx[p - 1]!; p--; }
      rootVotes[p] = v; rootIdx[p] = idx;
    }
  }

  // 3. grow a pairing from each root; keep the best
  let bestRaw = 0;
  let bestPaired = 0;
  let bestSupport = 0;
  for (let r = 0; r < nRoots; r++) {
    const ri = (rootIdx[r]! / nB) | 0;
    const rk = rootIdx[r]! - ri * nB;
    if (pairA[ri]! >= 0 || pairB[rk]! >= 0) continue;
    pairA[ri] = rk;
    pairB[rk] = ri;
    queueA[0] = ri;
    queueB[0] = rk;
    let qHead = 0;
    let qTail = 1;
    let support = 0;
    while (qHead < qTail) {
      const i = queueA[qHead]!;
      const k = queueB[qHead]!;
      qHead++;
      for (let e = 0; e < KA; e++) {
        const po = pE + (i * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
        const pw0 = pd[po]!;
        const pw1 = pd[po + 1]!;
        const j = pw0 & 255;
        const plen = pw0 >> 8;
        const pb1 = pw1 & 255;
        const pb2 = pw1 >> 8;
        const pj = pairA[j]!;
        let bestL = -1;
        let bestErr = 1e9;
        for (let f = 0; f < KB; f++) {
          const co = cE + (k * EDGES_PER_MINUTIA + f) * EDGE_WORDS;
          const cw0 = cd[co]!;
          const l = cw0 & 255;
          if (pj >= 0 ? pj !== l : pairB[l]! >= 0) continue;
          const dl = (cw0 >> 8) - plen;
          if (dl > GROW_TOL_LEN || dl < -GROW_TOL_LEN) continue;
          const cw1 = cd[co + 1]!;
          const e1 = circ(cw1 & 255, pb1);
          if (e1 > GROW_TOL_ANG) continue;
          const e2 = circ(cw1 >> 8, pb2);
          if (e2 > GROW_TOL_ANG) continue;
          const err = (dl < 0 ? -dl : dl) * 3 + e1 + e2;
          if (err < bestErr) { bestErr = err; bestL = l; }
        }
        if (bestL < 0) continue;
        support++;
        if (pj < 0) {
          pairA[j] = bestL;
          pairB[bestL] = j;
          queueA[qTail] = j;
          queueB[qTail] = bestL;
          qTail++;
        }
      }
    }
    const paired = qTail;
    const raw = rawScore(paired, support, nA, nB);
    if (raw > bestRaw) { bestRaw = raw; bestPaired = paired; bestSupport = support; }
    for (let q = 0; q < qTail; q++) { pairA[queueA[q]!] = -1; pairB[queueB[q]!] = -1; }
    if (paired >= 14) break; // clearly a mate: no need to try other roots
  }
  return { raw: bestRaw, paired: bestPaired, supporting: bestSupport, score: calibrateScore(bestRaw) };
}

/**
 * Raw score: paired minutiae and supporting edges, weighted by how much of the smaller template
 * was paired (a large pairing of a small template means more than the same count in a big one).
 */
export function rawScore(paired: number, support: number, nA: number, nB: number): number {
  if (paired < 2) return 0;
  const frac = paired / Math.min(nA, nB);
  return (paired + 0.5 * support) * (0.5 + frac);
}

/** Compares a probe with a prepared candidate: score ≈ −10·log10(FMR) (40 ≈ FMR 1e-4). */
export function compareProbe(probe: FingerProbe, cand: PreparedFinger): number {
  return matchDetail(probe, cand).score;
}

/** Compares two templates (prepares both; for many comparisons prepare once and use compareProbe). */
export function compareFingerTemplates(a: FingerTemplate, b: FingerTemplate): number {
  return compareProbe(new FingerProbe(prepareFinger(a)), prepareFinger(b));
}

/** Calls fn(bucket) for every edge of a prepared template (the index's prefilter and statistics). */
export function forEachEdgeBucket(p: PreparedFinger, fn: (bucket: number) => void): void {
  const d = p.data;
  const n = d[p.offset]!;
  const K = d[p.offset + 1]!;
  const eBase = p.offset + HEADER_WORDS + n * MINUTIA_WORDS;
  for (let i = 0; i < n; i++) {
    for (let e = 0; e < K; e++) {
      const o = eBase + (i * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
      fn(bucketOf(d[o]! >> 8, d[o + 1]! & 255, d[o + 1]! >> 8));
    }
  }
}

/** Words before the edge block and the edge count of a prepared template at `offset`. */
export function edgeLayout(data: Uint16Array, offset: number): { edgeBase: number; n: number; k: number } {
  const n = data[offset]!;
  return { edgeBase: offset + HEADER_WORDS + n * MINUTIA_WORDS, n, k: data[offset + 1]! };
}
