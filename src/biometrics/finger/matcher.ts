/**
 * Minutiae matcher: local edge structures find root pairs, a pairing grows from each root along
 * the edges (best edge first), the best pairings are extended by position and checked against one
 * elastic transform, and what survives is scored.
 *
 * 1. `prepareFinger` turns a template ONCE into a compact Uint16Array, its coordinates brought to
 *    500 dpi (`resolutionPpcm`), so templates of different resolutions compare: per minutia x, y,
 *    angle (256 units per turn) and type; per minutia its K = 6 nearest-neighbour edges, each
 *    (neighbour, length in px, β₁ = direction of the edge − own direction, β₂ = neighbour
 *    direction − own direction). Lengths and relative angles are invariant to rotation and
 *    translation and change little under local distortion.
 * 2. A probe gets a bucket table of its edges (length bins of 10 px × two angle bins of 45°, each
 *    edge written into the 2×2×2 buckets nearest it, so any edge within 5 px / 22.5° of it is
 *    found by one bucket read). Every candidate edge looks up its bucket; each compatible edge
 *    pair votes for its two minutia pairs. The 16 best-voted minutia pairs are roots.
 * 3. From each root a pairing grows best edge first (a heap keyed by the edge pair's error): the
 *    most similar unpaired edge pair leaving the paired minutiae pairs its far ends. The two
 *    largest local pairings go on.
 * 4. Extension: every unpaired probe minutia is predicted in the candidate from its nearest paired
 *    neighbour (the pairing's rotation applied to the offset) and paired with the nearest unpaired
 *    candidate minutia within 10 px + 10 % of that distance and 34° (elastic distortion grows with
 *    distance). Edges miss a minutia whose neighbours differ between the two impressions (a
 *    spurious or missing minutia nearby); positions do not.
 * 5. Verification: one transform (rotation from the paired directions, translation from the
 *    centroids) must explain every pair within the same elastic tolerance around the centroid;
 *    the pairs it does not explain are dropped. Each remaining pair counts by its accuracy
 *    (1 − (error / tolerance)²), each probe edge between two pairs whose partners' edge agrees
 *    ("supporting", in SourceAFIS's words) by its accuracy too, and the total is weighted by the
 *    fraction of the minutiae in the common area that were paired (the minutiae of each side
 *    within 30 px of the other's, after the transform): raw = (pairs + ½·supporting) ·
 *    (½ + paired / common). `calibrateScore` maps raw onto −10·log10(FMR) (finger-calibration.ts).
 */
import { DEFAULT_RESOLUTION_PPCM, type FingerTemplate } from './template.js';
import { calibrateScore } from './finger-calibration.js';

export const EDGES_PER_MINUTIA = 6;
/** At most this many minutiae are kept (the best quality first); a record holds up to 255. */
export const MAX_MINUTIAE = 128;
/** Layout of a prepared template (words): a header (n, K), per minutia x, y, angle | type << 8, per edge two words. */
export const HEADER_WORDS = 2;
export const MINUTIA_WORDS = 3;
export const EDGE_WORDS = 2;
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

/** Factor that brings a template's pixel coordinates to 500 dpi (unknown resolution: taken as 500 dpi). */
export function scaleTo500Dpi(resolutionPpcm: number): number {
  return resolutionPpcm > 0 ? DEFAULT_RESOLUTION_PPCM / resolutionPpcm : 1;
}

/** Prepares a template once (O(n²)); the result is what the matcher and the index store. */
export function prepareFinger(t: FingerTemplate): PreparedFinger {
  let ms = t.minutiae;
  if (ms.length > MAX_MINUTIAE) ms = [...ms].sort((a, b) => b.quality - a.quality).slice(0, MAX_MINUTIAE);
  const f = scaleTo500Dpi(t.resolutionPpcm);
  const xs = ms.map((m) => m.x * f),
    ys = ms.map((m) => m.y * f);
  const n = ms.length;
  const K = Math.min(EDGES_PER_MINUTIA, Math.max(0, n - 1));
  const data = new Uint16Array(preparedWords(n));
  data[0] = n;
  data[1] = K;
  const ang = ms.map((m) => angle256(m.angle));
  for (let i = 0; i < n; i++) {
    const m = ms[i]!;
    const o = HEADER_WORDS + i * MINUTIA_WORDS;
    data[o] = Math.max(0, Math.min(0xffff, Math.round(xs[i]!)));
    data[o + 1] = Math.max(0, Math.min(0xffff, Math.round(ys[i]!)));
    data[o + 2] = ang[i]! | ((m.type === 'ending' ? 1 : m.type === 'bifurcation' ? 2 : 0) << 8);
  }
  const eBase = HEADER_WORDS + n * MINUTIA_WORDS;
  const d2 = new Float64Array(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      d2[j] = j === i ? Infinity : (xs[j]! - xs[i]!) ** 2 + (ys[j]! - ys[i]!) ** 2;
      order[j] = j;
    }
    order.sort((a, b) => d2[a]! - d2[b]!);
    for (let e = 0; e < K; e++) {
      const j = order[e]!;
      const len = Math.min(255, Math.round(Math.sqrt(d2[j]!)));
      // Edge direction in the ISO convention (counter-clockwise as seen, y down).
      const dir = angle256(Math.atan2(-(ys[j]! - ys[i]!), xs[j]! - xs[i]!));
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
/** Tolerances of a root vote (guaranteed findable by the bucket layout: ≤ half a bin). */
const TOL_LEN = 5;
const TOL_ANG = 16;
/** Tolerances of an edge pair when growing a pairing and when counting supporting edges. */
const GROW_TOL_LEN = 6;
const GROW_TOL_ANG = 16;
/** Elastic tolerance of a pair's position: R0 px + R1 × distance (to the anchor or the centroid). */
const ELASTIC_R0 = 10;
const ELASTIC_R1 = 0.1;
/** Tolerance of a pair's direction after the transform (256 units per turn: 24 ≈ 34°). */
const PAIR_TOL_ANG = 24;
/** A minutia within this distance of one of the other side's (after the transform) is in the common area. */
const COMMON_AREA_PX = 30;
/** Roots tried; local pairings extended and verified. */
const MAX_ROOTS = 16;
const KEEP = 2;
/** Only a candidate minutia's nearest VOTE_EDGES edges vote for roots (all K are used to grow): short
 * edges are the most reliable, and the third one doubled the bucket reads for no better roots. */
const VOTE_EDGES = 2;
/** A local pairing this large is a mate: the other roots are not tried. */
const EARLY_STOP = 14;

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
        for (const l of lbs)
          for (const x of a1)
            for (const y of a2) {
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
/** Minutia pairs inside a pairing grown by this comparison (cleared through `touched`). */
let covered = new Uint8Array(0);
let touched = new Int32Array(0);
let pairA = new Int16Array(0);
let pairB = new Int16Array(0);
let queueA = new Int16Array(0);
let queueB = new Int16Array(0);
let keptA = new Int16Array(0);
let keptB = new Int16Array(0);
/** Probe minutiae predicted in the candidate's frame (verification). */
let predX = new Float64Array(0);
let predY = new Float64Array(0);

function ensureScratch(nA: number, nB: number): void {
  const need = Math.max(nA, nB, 1);
  if (need <= scratchSize) return;
  scratchSize = Math.max(need, 128);
  votes = new Uint16Array(scratchSize * scratchSize);
  covered = new Uint8Array(scratchSize * scratchSize);
  touched = new Int32Array(scratchSize * scratchSize);
  pairA = new Int16Array(scratchSize).fill(-1);
  pairB = new Int16Array(scratchSize).fill(-1);
  queueA = new Int16Array(scratchSize);
  queueB = new Int16Array(scratchSize);
  keptA = new Int16Array(KEEP * scratchSize);
  keptB = new Int16Array(KEEP * scratchSize);
  predX = new Float64Array(scratchSize);
  predY = new Float64Array(scratchSize);
}

const rootIdx = new Int32Array(MAX_ROOTS);
const rootVotes = new Int32Array(MAX_ROOTS);
const keptLocal = new Float64Array(KEEP);
const keptCount = new Int32Array(KEEP);

function circ(a: number, b: number): number {
  const d = (a - b) & 255;
  return d > 128 ? 256 - d : d;
}

// ---- best-first growth: a binary heap of edge pairs keyed by their error ------------------------

let heapKey = new Float32Array(4096);
let heapVal = new Int32Array(4096);
let heapSize = 0;

function heapPush(key: number, val: number): void {
  if (heapSize === heapKey.length) {
    const k = new Float32Array(heapSize * 2);
    k.set(heapKey);
    heapKey = k;
    const v = new Int32Array(heapSize * 2);
    v.set(heapVal);
    heapVal = v;
  }
  let p = heapSize++;
  while (p > 0) {
    const parent = (p - 1) >> 1;
    if (heapKey[parent]! <= key) break;
    heapKey[p] = heapKey[parent]!;
    heapVal[p] = heapVal[parent]!;
    p = parent;
  }
  heapKey[p] = key;
  heapVal[p] = val;
}

function heapPop(): number {
  const top = heapVal[0]!;
  const key = heapKey[--heapSize]!;
  const val = heapVal[heapSize]!;
  let p = 0;
  for (;;) {
    let c = 2 * p + 1;
    if (c >= heapSize) break;
    if (c + 1 < heapSize && heapKey[c + 1]! < heapKey[c]!) c++;
    if (heapKey[c]! >= key) break;
    heapKey[p] = heapKey[c]!;
    heapVal[p] = heapVal[c]!;
    p = c;
  }
  heapKey[p] = key;
  heapVal[p] = val;
  return top;
}

/** The two templates of one comparison: data, minutia and edge blocks, counts. */
interface Sides {
  pd: Uint16Array;
  pM: number;
  pE: number;
  nA: number;
  KA: number;
  cd: Uint16Array;
  cM: number;
  cE: number;
  nB: number;
  KB: number;
}

const sides: Sides = { pd: new Uint16Array(0), pM: 0, pE: 0, nA: 0, KA: 0, cd: new Uint16Array(0), cM: 0, cE: 0, nB: 0, KB: 0 };

/** Queues every compatible pair of edges leaving the paired minutiae (i, k), keyed by their error. */
function pushEdges(s: Sides, i: number, k: number): void {
  const { pd, pE, KA, cd, cE, KB } = s;
  for (let e = 0; e < KA; e++) {
    const po = pE + (i * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
    const pw0 = pd[po]!;
    const j = pw0 & 255;
    const pj = pairA[j]!;
    const plen = pw0 >> 8;
    const pw1 = pd[po + 1]!;
    const pb1 = pw1 & 255;
    const pb2 = pw1 >> 8;
    for (let f = 0; f < KB; f++) {
      const co = cE + (k * EDGES_PER_MINUTIA + f) * EDGE_WORDS;
      const cw0 = cd[co]!;
      const l = cw0 & 255;
      if (pj >= 0 ? pj !== l : pairB[l]! >= 0) continue;
      let dl = (cw0 >> 8) - plen;
      if (dl < 0) dl = -dl;
      if (dl > GROW_TOL_LEN) continue;
      const cw1 = cd[co + 1]!;
      const e1 = circ(cw1 & 255, pb1);
      if (e1 > GROW_TOL_ANG) continue;
      const e2 = circ(cw1 >> 8, pb2);
      if (e2 > GROW_TOL_ANG) continue;
      heapPush(dl / GROW_TOL_LEN + (e1 + e2) / (2 * GROW_TOL_ANG), (j << 16) | l);
    }
  }
}

/** Edges of the last pairing `growFromRoot` grew. */
let grownEdges = 0;

/** Grows the pairing of root (ri, rk) into queueA/queueB (pairA/pairB set); returns its pair count. */
function growFromRoot(s: Sides, ri: number, rk: number): number {
  pairA[ri] = rk;
  pairB[rk] = ri;
  queueA[0] = ri;
  queueB[0] = rk;
  let paired = 1;
  let edges = 0;
  heapSize = 0;
  pushEdges(s, ri, rk);
  while (heapSize > 0) {
    const top = heapPop();
    const j = top >> 16;
    const l = top & 0xffff;
    const pj = pairA[j]!;
    if (pj === l) {
      edges++;
      continue;
    }
    if (pj >= 0 || pairB[l]! >= 0) continue;
    edges++;
    pairA[j] = l;
    pairB[l] = j;
    queueA[paired] = j;
    queueB[paired] = l;
    paired++;
    pushEdges(s, j, l);
  }
  grownEdges = edges;
  return paired;
}

/** The pairing's rotation in 256 units: circular mean of (candidate − probe) directions of its pairs. */
function pairingRotation(s: Sides, m: number): number {
  let sc = 0,
    ss = 0;
  for (let q = 0; q < m; q++) {
    const d = ((s.cd[s.cM + queueB[q]! * MINUTIA_WORDS + 2]! - s.pd[s.pM + queueA[q]! * MINUTIA_WORDS + 2]!) & 255) * (TWO_PI / 256);
    sc += Math.cos(d);
    ss += Math.sin(d);
  }
  return Math.atan2(ss, sc);
}

/**
 * Extends the pairing in queueA/queueB (m pairs, pairA/pairB set) by position: each unpaired probe
 * minutia is predicted from its nearest paired neighbour; returns the new pair count.
 */
let wantAngle = 0;
/** An unpaired candidate minutia whose direction is within PAIR_TOL_ANG of `wantAngle`. */
const unpairedWithAngle = (l: number): boolean =>
  pairB[l]! < 0 && circ(sides.cd[sides.cM + l * MINUTIA_WORDS + 2]! & 255, wantAngle) <= PAIR_TOL_ANG;
const anyPoint = (): boolean => true;

function extendByPosition(s: Sides, m: number): number {
  const { pd, pM, nA, cd, cM } = s;
  const rot = pairingRotation(s, m);
  const rot256 = Math.round((rot / TWO_PI) * 256) & 255;
  // ISO directions turn by −θ when the image turns by θ (y down): the image rotation is −rot.
  const c = Math.cos(-rot),
    sn = Math.sin(-rot);
  for (let pass = 0; pass < 2; pass++) {
    const before = m;
    for (let i = 0; i < nA; i++) {
      if (pairA[i]! >= 0) continue;
      const px = pd[pM + i * MINUTIA_WORDS]!,
        py = pd[pM + i * MINUTIA_WORDS + 1]!;
      let anchor = -1,
        ad = Infinity;
      for (let q = 0; q < m; q++) {
        const a = queueA[q]!;
        const dx = pd[pM + a * MINUTIA_WORDS]! - px,
          dy = pd[pM + a * MINUTIA_WORDS + 1]! - py;
        const d = dx * dx + dy * dy;
        if (d < ad) {
          ad = d;
          anchor = q;
        }
      }
      const a = queueA[anchor]!,
        b = queueB[anchor]!;
      const ox = px - pd[pM + a * MINUTIA_WORDS]!,
        oy = py - pd[pM + a * MINUTIA_WORDS + 1]!;
      const ex = cd[cM + b * MINUTIA_WORDS]! + c * ox - sn * oy,
        ey = cd[cM + b * MINUTIA_WORDS + 1]! + sn * ox + c * oy;
      const tol = ELASTIC_R0 + ELASTIC_R1 * Math.sqrt(ad);
      wantAngle = (pd[pM + i * MINUTIA_WORDS + 2]! + rot256) & 255;
      const best = nearestIn(candGrid, ex, ey, tol, unpairedWithAngle);
      if (best < 0) continue;
      pairA[i] = best;
      pairB[best] = i;
      queueA[m] = i;
      queueB[m] = best;
      m++;
    }
    if (m === before) break;
  }
  return m;
}

// ---- a uniform grid over points, for the neighbourhood queries of extension and verification ----

const CELL = 32;

class PointGrid {
  x = new Float64Array(0);
  y = new Float64Array(0);
  start = new Int32Array(0);
  items = new Int16Array(0);
  x0 = 0;
  y0 = 0;
  w = 0;
  h = 0;

  /** Indexes the n points (xs[i], ys[i]). */
  build(n: number): void {
    const { x, y } = this;
    let minX = Infinity,
      minY = Infinity,
      maxX = -Infinity,
      maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      if (x[i]! < minX) minX = x[i]!;
      if (x[i]! > maxX) maxX = x[i]!;
      if (y[i]! < minY) minY = y[i]!;
      if (y[i]! > maxY) maxY = y[i]!;
    }
    this.x0 = minX;
    this.y0 = minY;
    this.w = Math.floor((maxX - minX) / CELL) + 1;
    this.h = Math.floor((maxY - minY) / CELL) + 1;
    const cells = this.w * this.h;
    if (this.start.length < cells + 1) this.start = new Int32Array(cells + 1);
    if (this.items.length < n) this.items = new Int16Array(Math.max(n, 128));
    const start = this.start;
    start.fill(0, 0, cells + 1);
    for (let i = 0; i < n; i++) start[this.cellOf(x[i]!, y[i]!) + 1]!++;
    for (let c = 0; c < cells; c++) start[c + 1]! += start[c]!;
    for (let i = 0; i < n; i++) this.items[start[this.cellOf(x[i]!, y[i]!)]!++] = i;
    for (let c = cells; c > 0; c--) start[c] = start[c - 1]!;
    start[0] = 0;
  }

  private cellOf(px: number, py: number): number {
    return Math.floor((py - this.y0) / CELL) * this.w + Math.floor((px - this.x0) / CELL);
  }

  ensure(n: number): void {
    if (this.x.length < n) {
      this.x = new Float64Array(Math.max(n, 128));
      this.y = new Float64Array(Math.max(n, 128));
    }
  }
}

/** Candidate minutiae and the probe's predicted positions, indexed. */
const candGrid = new PointGrid();
const predGrid = new PointGrid();

/**
 * The nearest point of `g` to (px, py) within `r` that `accept` takes, or −1. Cells are scanned
 * over the circle's bounding box.
 */
function nearestIn(g: PointGrid, px: number, py: number, r: number, accept: (i: number) => boolean): number {
  const cx0 = Math.max(0, Math.floor((px - r - g.x0) / CELL)),
    cx1 = Math.min(g.w - 1, Math.floor((px + r - g.x0) / CELL));
  const cy0 = Math.max(0, Math.floor((py - r - g.y0) / CELL)),
    cy1 = Math.min(g.h - 1, Math.floor((py + r - g.y0) / CELL));
  let best = -1,
    bd = r * r;
  for (let cy = cy0; cy <= cy1; cy++) {
    for (let cx = cx0; cx <= cx1; cx++) {
      const c = cy * g.w + cx;
      for (let q = g.start[c]!, e = g.start[c + 1]!; q < e; q++) {
        const i = g.items[q]!;
        const dx = g.x[i]! - px,
          dy = g.y[i]! - py;
        const d = dx * dx + dy * dy;
        if (d < bd && accept(i)) {
          bd = d;
          best = i;
        }
      }
    }
  }
  return best;
}

export interface MatchDetail {
  raw: number;
  /** Minutia pairs after verification. */
  paired: number;
  /** Probe edges between pairs whose partners' edge agrees. */
  supporting: number;
  /** Minutiae of the probe and of the candidate in the area both show. */
  common: number;
  score: number;
}

/**
 * Verifies the pairing in queueA/queueB (m pairs, pairA/pairB set) against one transform and scores
 * it (see the module comment, step 5).
 */
const verified: MatchDetail = { raw: 0, paired: 0, supporting: 0, common: 0, score: 0 };

function verify(s: Sides, m: number): MatchDetail {
  const { pd, pM, pE, nA, KA, cd, cM, cE, nB, KB } = s;
  const rot = pairingRotation(s, m);
  const rot256 = Math.round((rot / TWO_PI) * 256) & 255;
  const c = Math.cos(-rot),
    sn = Math.sin(-rot);
  let ax = 0,
    ay = 0,
    bx = 0,
    by = 0;
  for (let q = 0; q < m; q++) {
    ax += pd[pM + queueA[q]! * MINUTIA_WORDS]!;
    ay += pd[pM + queueA[q]! * MINUTIA_WORDS + 1]!;
    bx += cd[cM + queueB[q]! * MINUTIA_WORDS]!;
    by += cd[cM + queueB[q]! * MINUTIA_WORDS + 1]!;
  }
  ax /= m;
  ay /= m;
  bx /= m;
  by /= m;
  for (let i = 0; i < nA; i++) {
    const ox = pd[pM + i * MINUTIA_WORDS]! - ax,
      oy = pd[pM + i * MINUTIA_WORDS + 1]! - ay;
    predX[i] = bx + c * ox - sn * oy;
    predY[i] = by + sn * ox + c * oy;
  }
  let kept = 0;
  let pairWeight = 0;
  for (let q = 0; q < m; q++) {
    const i = queueA[q]!,
      l = queueB[q]!;
    const dx = cd[cM + l * MINUTIA_WORDS]! - predX[i]!,
      dy = cd[cM + l * MINUTIA_WORDS + 1]! - predY[i]!;
    const ox = pd[pM + i * MINUTIA_WORDS]! - ax,
      oy = pd[pM + i * MINUTIA_WORDS + 1]! - ay;
    const tol = ELASTIC_R0 + ELASTIC_R1 * Math.sqrt(ox * ox + oy * oy);
    const err = Math.sqrt(dx * dx + dy * dy);
    if (err > tol || circ(cd[cM + l * MINUTIA_WORDS + 2]! & 255, (pd[pM + i * MINUTIA_WORDS + 2]! + rot256) & 255) > PAIR_TOL_ANG) {
      pairA[i] = -1;
      pairB[l] = -1;
      continue;
    }
    pairWeight += 1 - (err / tol) ** 2;
    queueA[kept] = i;
    queueB[kept] = l;
    kept++;
  }
  // Supporting edges, each weighted by how well its length and angles agree.
  let supporting = 0,
    edgeWeight = 0;
  for (let q = 0; q < kept; q++) {
    const i = queueA[q]!,
      k = queueB[q]!;
    for (let e = 0; e < KA; e++) {
      const po = pE + (i * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
      const l = pairA[pd[po]! & 255]!;
      if (l < 0) continue;
      for (let f = 0; f < KB; f++) {
        const co = cE + (k * EDGES_PER_MINUTIA + f) * EDGE_WORDS;
        if ((cd[co]! & 255) !== l) continue;
        const dl = Math.abs((cd[co]! >> 8) - (pd[po]! >> 8));
        const e1 = circ(cd[co + 1]! & 255, pd[po + 1]! & 255),
          e2 = circ(cd[co + 1]! >> 8, pd[po + 1]! >> 8);
        if (dl <= GROW_TOL_LEN && e1 <= GROW_TOL_ANG && e2 <= GROW_TOL_ANG) {
          supporting++;
          edgeWeight += (1 - (dl / GROW_TOL_LEN) ** 2) * (1 - ((e1 + e2) / (2 * GROW_TOL_ANG)) ** 2);
        }
        break;
      }
    }
  }
  // The common area: the minutiae of each side near one of the other's.
  predGrid.ensure(nA);
  predGrid.x.set(predX.subarray(0, nA));
  predGrid.y.set(predY.subarray(0, nA));
  predGrid.build(nA);
  let commonA = 0,
    commonB = 0;
  for (let i = 0; i < nA; i++) if (pairA[i]! >= 0 || nearestIn(candGrid, predX[i]!, predY[i]!, COMMON_AREA_PX, anyPoint) >= 0) commonA++;
  for (let l = 0; l < nB; l++)
    if (pairB[l]! >= 0 || nearestIn(predGrid, candGrid.x[l]!, candGrid.y[l]!, COMMON_AREA_PX, anyPoint) >= 0) commonB++;
  const common = Math.max(kept, Math.min(commonA, commonB));
  verified.raw = rawScore(kept, pairWeight, edgeWeight, common, nA, nB);
  verified.paired = kept;
  verified.supporting = supporting;
  verified.common = common;
  return verified;
}

/** Template size (minutiae) at which the size normalization of the raw score is 1. */
const REFERENCE_SIZE = 30;

/**
 * Raw score: the accuracy-weighted pairs and supporting edges, weighted by the fraction of the
 * common area's minutiae that were paired, and by √(30 / √(nA·nB)): chance pairings grow with the
 * number of minutiae, and without it the impostor tail of 60-minutia templates lay a third higher
 * than that of 30-minutia ones, so one threshold meant different false match rates for large and
 * small prints (with it the 99.9th impostor percentile is within 10 % from 20 to 60 minutiae, on
 * the synthetic and the real set). Fewer than 2 pairs is no match.
 */
export function rawScore(paired: number, pairWeight: number, edgeWeight: number, common: number, nA: number, nB: number): number {
  if (paired < 2) return 0;
  const size = Math.min(MAX_MINUTIAE, Math.max(12, Math.sqrt(nA * nB)));
  return (pairWeight + 0.5 * edgeWeight) * (0.5 + paired / Math.max(paired, common)) * Math.sqrt(REFERENCE_SIZE / size);
}

/** Compares a probe with one prepared candidate; the raw (uncalibrated) figures. */
export function matchDetail(probe: FingerProbe, cand: PreparedFinger): MatchDetail {
  const pd = probe.prepared.data;
  const pBase = probe.prepared.offset;
  const nA = probe.n;
  const cd = cand.data;
  const cBase = cand.offset;
  const nB = cd[cBase]!;
  if (nA < 2 || nB < 2) return { raw: 0, paired: 0, supporting: 0, common: 0, score: 0 };
  ensureScratch(nA, nB);
  const s = sides;
  s.pd = pd;
  s.pM = pBase + HEADER_WORDS;
  s.pE = pBase + HEADER_WORDS + nA * MINUTIA_WORDS;
  s.nA = nA;
  s.KA = pd[pBase + 1]!;
  s.cd = cd;
  s.cM = cBase + HEADER_WORDS;
  s.cE = cBase + HEADER_WORDS + nB * MINUTIA_WORDS;
  s.nB = nB;
  s.KB = cd[cBase + 1]!;
  const bStart = probe.bucketStart;
  const bEdges = probe.bucketEdges;

  // 1. votes from compatible edge pairs
  let nTouched = 0;
  const KV = Math.min(s.KB, VOTE_EDGES);
  for (let k = 0; k < nB; k++) {
    for (let e = 0; e < KV; e++) {
      const o = s.cE + (k * EDGES_PER_MINUTIA + e) * EDGE_WORDS;
      const w0 = cd[o]!;
      const w1 = cd[o + 1]!;
      const len = w0 >> 8;
      const b1 = w1 & 255;
      const b2 = w1 >> 8;
      const key = bucketOf(len, b1, b2);
      const end = bStart[key + 1]!;
      for (let q = bStart[key]!; q < end; q++) {
        const ref = bEdges[q]!;
        const po = s.pE + ref * EDGE_WORDS;
        const pw0 = pd[po]!;
        const pw1 = pd[po + 1]!;
        const dl = (pw0 >> 8) - len;
        if (dl > TOL_LEN || dl < -TOL_LEN) continue;
        if (circ(pw1 & 255, b1) > TOL_ANG || circ(pw1 >> 8, b2) > TOL_ANG) continue;
        const i = (ref / EDGES_PER_MINUTIA) | 0;
        const v1 = i * nB + k;
        if (votes[v1]++ === 0) touched[nTouched++] = v1;
        const v2 = (pw0 & 255) * nB + (w0 & 255);
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
    if (nRoots < MAX_ROOTS || v > rootVotes[MAX_ROOTS - 1]!) {
      let p = nRoots < MAX_ROOTS ? nRoots++ : MAX_ROOTS - 1;
      while (p > 0 && rootVotes[p - 1]! < v) {
        rootVotes[p] = rootVotes[p - 1]!;
        rootIdx[p] = rootIdx[p - 1]!;
        p--;
      }
      rootVotes[p] = v;
      rootIdx[p] = idx;
    }
  }

  // 3. grow a pairing from each root; keep the KEEP largest (pairs + ½ edges)
  let nKept = 0;
  let nCovered = 0;
  for (let r = 0; r < nRoots; r++) {
    // A root inside a pairing already grown would grow the same pairing again.
    if (covered[rootIdx[r]!]) continue;
    const ri = (rootIdx[r]! / nB) | 0;
    const paired = growFromRoot(s, ri, rootIdx[r]! - ri * nB);
    for (let q = 0; q < paired; q++) {
      const c = queueA[q]! * nB + queueB[q]!;
      if (!covered[c]) {
        covered[c] = 1;
        touched[nCovered++] = c;
      }
    }
    const local = paired + 0.5 * grownEdges;
    let slot = -1;
    if (paired >= 2) {
      if (nKept < KEEP) slot = nKept++;
      else {
        let w = 0;
        for (let q = 1; q < KEEP; q++) if (keptLocal[q]! < keptLocal[w]!) w = q;
        if (local > keptLocal[w]!) slot = w;
      }
    }
    if (slot >= 0) {
      keptLocal[slot] = local;
      keptCount[slot] = paired;
      keptA.set(queueA.subarray(0, paired), slot * scratchSize);
      keptB.set(queueB.subarray(0, paired), slot * scratchSize);
    }
    for (let q = 0; q < paired; q++) {
      pairA[queueA[q]!] = -1;
      pairB[queueB[q]!] = -1;
    }
    if (paired >= EARLY_STOP) break; // clearly a mate: no need to try other roots
  }
  for (let t = 0; t < nCovered; t++) covered[touched[t]!] = 0;

  // 4–5. extend each kept pairing by position, verify it, keep the best score
  if (nKept > 0) {
    candGrid.ensure(nB);
    for (let l = 0; l < nB; l++) {
      candGrid.x[l] = cd[s.cM + l * MINUTIA_WORDS]!;
      candGrid.y[l] = cd[s.cM + l * MINUTIA_WORDS + 1]!;
    }
    candGrid.build(nB);
  }
  let bestRaw = 0,
    bestPaired = 0,
    bestSupporting = 0,
    bestCommon = 0;
  for (let q = 0; q < nKept; q++) {
    const m0 = keptCount[q]!;
    for (let p = 0; p < m0; p++) {
      const i = keptA[q * scratchSize + p]!,
        k = keptB[q * scratchSize + p]!;
      queueA[p] = i;
      queueB[p] = k;
      pairA[i] = k;
      pairB[k] = i;
    }
    const m = extendByPosition(s, m0);
    const d = verify(s, m);
    for (let i = 0; i < nA; i++) pairA[i] = -1;
    for (let l = 0; l < nB; l++) pairB[l] = -1;
    if (d.raw > bestRaw) {
      bestRaw = d.raw;
      bestPaired = d.paired;
      bestSupporting = d.supporting;
      bestCommon = d.common;
    }
  }
  return {
    raw: bestRaw,
    paired: bestPaired,
    supporting: bestSupporting,
    common: bestCommon,
    score: bestRaw > 0 ? calibrateScore(bestRaw) : 0,
  };
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
