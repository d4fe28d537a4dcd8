/**
 * The iris 1:N decision: how close the best template must be, given how many templates a search
 * compares the probe with.
 *
 * One comparison of two different eyes comes under a distance t with some chance FMR(t); a search
 * over N templates does so about N times as often, so a fixed threshold lets a stranger in more
 * often the more eyes are enrolled. The chance tail of one comparison, measured on real captures
 * (the pooled tuning halves of the four shared iris folders, four cameras; `irisChanceTail` in
 * `npm run bench:real -- --iris DIR ...`), falls by one decade per `1 / perDecade` of distance
 * below the configured threshold: log10 FMR(t) ≈ log10Fmr + perDecade · (t − hd). Real impostor
 * tails are not Daugman's binomial: two eyes with little visible texture both read the camera's
 * shading, so the line (an exponential tail) is kept past the measured range rather than a
 * Gaussian that would promise far less.
 *
 * The search accepts its best template when N · FMR(distance) ≤ fpir and the distance is at or
 * under the configured `biometrics.irisThreshold`, which stays the ceiling: a one-template gallery,
 * and a 1:1 comparison, decide exactly as before.
 */

/** The measured chance tail of one comparison (normalized Hamming distance, rotation search included). */
export const IRIS_CHANCE_TAIL = {
  /** Where the tail was read: the default threshold. */
  hd: 0.32,
  /** log10 of the share of different-eye comparisons at or under `hd`. */
  log10Fmr: -3.46,
  /** Decades of FMR per unit of distance (the tail's slope). */
  perDecade: 35,
} as const;

/** A stranger's search over the whole gallery ends on somebody at most this often (as for fingers). */
export const DEFAULT_IRIS_FPIR = 1e-3;

/** The chance that one comparison of two different eyes comes at or under `hd` (the fitted tail, at most 1). */
export function irisChanceFmr(hd: number): number {
  return Math.min(1, 10 ** (IRIS_CHANCE_TAIL.log10Fmr + IRIS_CHANCE_TAIL.perDecade * (hd - IRIS_CHANCE_TAIL.hd)));
}

/**
 * The largest distance a search over `templates` templates accepts: where templates · FMR = fpir,
 * never above `ceiling` (the configured threshold).
 */
export function irisIdentificationThreshold(ceiling: number, templates: number, fpir = DEFAULT_IRIS_FPIR): number {
  if (!(fpir > 0 && fpir < 1)) throw new RangeError(`iris fpir must be within (0, 1), got ${fpir}`);
  const n = Math.max(1, templates);
  const t = IRIS_CHANCE_TAIL.hd + (Math.log10(fpir / n) - IRIS_CHANCE_TAIL.log10Fmr) / IRIS_CHANCE_TAIL.perDecade;
  return Math.min(ceiling, t);
}
