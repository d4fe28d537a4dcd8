/**
 * Verification error rates from genuine and impostor scores (higher = more similar), as FVC
 * reports them: FMR(t) = impostors scoring ≥ t, FNMR(t) = genuines scoring < t.
 */

export interface OperatingPoint {
  /** FNMR at the lowest threshold whose FMR is at most `fmr`; null when the impostors cannot resolve it. */
  fnmr: number | null;
  threshold: number | null;
  /** Impostor pairs needed for one false match at this level (1 / fmr). */
  impostorsNeeded: number;
  resolved: boolean;
}

/** Scores sorted ascending (copies). */
export function sortedScores(v: ArrayLike<number>): Float64Array {
  return Float64Array.from(v).sort();
}

/** Fraction of the sorted array at or above t. */
export function fractionAtOrAbove(sorted: Float64Array, t: number): number {
  let lo = 0,
    hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return sorted.length ? (sorted.length - lo) / sorted.length : 0;
}

/**
 * The operating point at FMR `fmr`: the threshold just above the (k+1)-th best impostor score,
 * k = ⌊fmr · impostors⌋ impostors allowed to pass. With fewer than 1/fmr impostor pairs not one
 * false match can be allowed, so the level is not resolved (fnmr null).
 */
export function fnmrAtFmr(gen: Float64Array, imp: Float64Array, fmr: number): OperatingPoint {
  const impostorsNeeded = Math.ceil(1 / fmr);
  if (imp.length < impostorsNeeded) return { fnmr: null, threshold: null, impostorsNeeded, resolved: false };
  const k = Math.floor(fmr * imp.length);
  const t = nextUp(imp[imp.length - 1 - k]!);
  return { fnmr: 1 - fractionAtOrAbove(gen, t), threshold: t, impostorsNeeded, resolved: true };
}

/** FNMR and FMR at a fixed threshold (accept at score ≥ t). */
export function ratesAt(gen: Float64Array, imp: Float64Array, t: number): { fnmr: number; fmr: number } {
  return { fnmr: 1 - fractionAtOrAbove(gen, t), fmr: fractionAtOrAbove(imp, t) };
}

/**
 * Equal error rate, FVC's definition: t1 the highest threshold with FNMR ≤ FMR, t2 the lowest
 * with FNMR ≥ FMR; the EER is the middle of the interval at whichever of them has the smaller
 * FMR + FNMR.
 */
export function equalErrorRate(gen: Float64Array, imp: Float64Array): number {
  if (!gen.length || !imp.length) return NaN;
  const ts = sortedScores([...gen, ...imp, Infinity]);
  let t1: { fmr: number; fnmr: number } | null = null,
    t2: { fmr: number; fnmr: number } | null = null;
  for (let i = 0; i < ts.length; i++) {
    if (i > 0 && ts[i] === ts[i - 1]) continue;
    const r = ratesAt(gen, imp, ts[i]!);
    if (r.fnmr <= r.fmr) t1 = r;
    if (r.fnmr >= r.fmr && !t2) t2 = r;
  }
  if (!t1) return (t2!.fmr + t2!.fnmr) / 2;
  if (!t2) return (t1.fmr + t1.fnmr) / 2;
  return t1.fmr + t1.fnmr <= t2.fmr + t2.fnmr ? (t1.fnmr + t1.fmr) / 2 : (t2.fmr + t2.fnmr) / 2;
}

/** The smallest double above x (so "≥ threshold" excludes x itself). */
export function nextUp(x: number): number {
  if (x === -Infinity) return -Number.MAX_VALUE;
  if (!Number.isFinite(x)) return x;
  const f = new Float64Array([x]);
  const b = new BigInt64Array(f.buffer);
  if (x === 0) return Number.MIN_VALUE;
  b[0] = x > 0 ? b[0]! + 1n : b[0]! - 1n;
  return f[0]!;
}

/** The p-quantile of an ascending array (nearest rank). */
export function quantile(sorted: ArrayLike<number>, p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
