/**
 * The 1:N decision for fingers: is the best person of a search the one in front of the scanner?
 *
 * A calibrated comparison score s is ≈ −10·log10(FMR): an impostor comparison reaches s with
 * probability 10^(−s/10). One search compares the probe with up to N templates, so the best of
 * them reaches s by chance about N times as often: a threshold that means FMR 1e-4 for one
 * comparison (40) gives about one false candidate per search at N = 10,000. The decision therefore
 * looks at three figures, N, the best person's score S1 and the second-best person's S2, through
 * one number: the chance that a stranger's search ends with a best person at least S1 that leads
 * the next one by at least S1 − S2. With exponential tails (the calibration's) the gap between the
 * two best of N chance scores does not depend on N, and
 *
 *   P(best ≥ S1, gap ≥ S1 − S2) = 10^(−(S1 − S2)/10) · (1 − exp(−N · 10^(−S2/10)))
 *
 * The second-best score S2 is taken at least at 10·log10(N), the level the best of N chance scores
 * reaches about once (below it the calibration's exponential tail does not hold: most impostor
 * comparisons score 0, and a stranger's second-best is low as often as not). So a lone strong
 * candidate (S2 low) gets ≈ S1 − 10·log10(N) + 2: the score alone speaks, and N counts; a second
 * person above that level takes the confidence down with it, towards the margin S1 − S2.
 * `confidence` is −10·log10 of that chance; the best person is accepted when it reaches
 * −10·log10(fpir), S1 reaches the configured per-comparison floor (`threshold`) and S1 leads S2 by
 * `margin` at least (two enrolled persons this close are not told apart by the chance model: a
 * stranger rarely scores high twice, but a mate may). Scores fused from k fingers (a sum of k
 * calibrated scores) are first brought back to the one-comparison scale through the tail of a sum
 * of k exponentials (`fusedToSingle`).
 *
 * When the best person clears the floor but not the confidence or the margin (two persons close,
 * or one weak candidate), the policy can ask for a second finger instead of rejecting.
 *
 * Cohort normalisation (`cohortNormalizer`): the calibration is the synthetic set's, and some
 * probes do not follow it. On small low-resolution captures (SOCOFing, 96×103 at about 190 dpi)
 * strangers score well above it: the best of 1,000 reached 60–95 for 1 % of strangers, where the
 * calibration expects 50, so the decision took 1.2–2.6 % of strangers for someone against a target
 * of 0.1 %. Each search therefore measures its own chance tail on its candidate list: the persons
 * ranked 3rd to 20th (strangers to the probe, save in a gallery that files one person twice) at
 * rank k score about a − b·10·log10(k), where a calibrated probe has a = 10·log10(N) and b = 1.
 * The probe's scores s are mapped onto the calibrated scale by 10·log10(N) + (s − a)/b (b kept in
 * [1, 4]) and never raised (the smaller of s and the mapped value), before fusion and the decision.
 * A lone strong mate keeps a high score (its distance above the cohort in the cohort's own units);
 * a stranger whose whole candidate list sits high or spreads wide loses what the list explains.
 * Fewer than 8 positive scores among ranks 3–20 (a small gallery) leave the scores as they are.
 */

/** What the terminal's configuration decides. */
export interface FingerDecisionPolicy {
  /** Floor: the best person's score must reach it (calibrated, ≈ −10·log10 FMR of one comparison; `biometrics.fingerThreshold`). */
  threshold: number;
  /** Target false-positive identification rate: the chance a stranger is taken for someone (0 < fpir < 1). */
  fpir: number;
  /** The best person must lead the second-best by this much (same scale); closer, the two are ambiguous. */
  margin: number;
  /** Ask for a second finger when one finger leaves the best person above the floor but not sure enough. */
  secondFinger: boolean;
  /**
   * The share of `fpir` a decision on two or more fingers may spend (default 1): asking for another
   * finger gives a stranger a second chance, so the fused decision needs −10·log10(fpir · share).
   */
  secondFingerShare?: number;
  /**
   * Every capture after the first must point, on its own, to the person the fusion accepts: its
   * score for that person reaches this floor and no other candidate scores higher for it (default: no such rule).
   */
  secondFingerFloor?: number;
}

/**
 * The defaults: FMR 1e-4 per comparison as the floor (the configuration's fingerThreshold), one
 * stranger in 1,000 taken for someone; half that budget for the decision after a second finger,
 * whose capture must also clear the same floor of 40 on its own for the accepted person (chosen on
 * the tune half of SOCOFing, bench:identify: at N = 10,000 strangers accepted after a second finger
 * went from 2 of 538 to 1, at N = 1,000 from 1 to 0; docs/biometrics.md).
 */
export const DEFAULT_FINGER_DECISION: FingerDecisionPolicy = {
  threshold: 40,
  fpir: 1e-3,
  margin: 6,
  secondFinger: true,
  secondFingerShare: 0.5,
  secondFingerFloor: 40,
};

export type FingerDecision = 'accept' | 'reject' | 'ask-second-finger';

export interface DecisionInput {
  /** The best person's score (null: nobody in the gallery). */
  first: number | null;
  /** The second-best person's score (null: nobody else). */
  second: number | null;
  /** Templates the search could have reached (the gallery's size). */
  n: number;
}

export interface DecisionOutcome {
  decision: FingerDecision;
  /** −10·log10 of the chance that a stranger's search looks like this one (higher is surer). */
  confidence: number;
  /** The confidence needed: −10·log10(fpir), of fpir · secondFingerShare for two or more fingers. */
  needed: number;
  /** S1 − S2 (S1 when there is no second person); null without a first. */
  margin: number | null;
  /** The best person cleared floor and confidence but led the second by less than the policy's margin. */
  ambiguous: boolean;
}

const LN10_10 = Math.LN10 / 10;

/**
 * −10·log10 P(a stranger's best ≥ first and its lead ≥ first − second) among n templates (see the
 * module comment); 0 without a first.
 */
export function identificationConfidence(first: number | null, second: number | null, n: number): number {
  if (first === null) return 0;
  const s2 = Math.min(first, Math.max(second ?? 0, 10 * Math.log10(Math.max(1, n))));
  const reach = Math.max(1, n) * Math.exp(-LN10_10 * s2);
  // 1 − exp(−x) without losing precision for small x
  const some = reach < 1e-6 ? reach : -Math.expm1(-reach);
  return first - s2 - 10 * Math.log10(some);
}

/**
 * The one-comparison score with the same chance tail as a sum of `k` calibrated scores: the sum of
 * k independent exponentials is a gamma variable, P(sum ≥ s) = e^(−λs) · Σ_{j<k} (λs)^j / j!.
 */
export function fusedToSingle(sum: number, k: number): number {
  if (k <= 1 || sum <= 0) return sum;
  const x = LN10_10 * sum;
  let term = 1;
  let series = 1;
  for (let j = 1; j < k; j++) {
    term *= x / j;
    series += term;
  }
  return sum - 10 * Math.log10(series);
}

/** The decision on one search's two best persons (see the module comment). */
export function decideIdentification(input: DecisionInput, policy: FingerDecisionPolicy, probes = 1): DecisionOutcome {
  const needed = -10 * Math.log10(policy.fpir * (probes > 1 ? (policy.secondFingerShare ?? 1) : 1));
  if (input.first === null) return { decision: 'reject', confidence: 0, needed, margin: null, ambiguous: false };
  const confidence = identificationConfidence(input.first, input.second, input.n);
  const margin = input.first - Math.max(0, input.second ?? 0);
  const ambiguous = input.first >= policy.threshold && confidence >= needed && margin < policy.margin;
  let decision: FingerDecision = 'reject';
  if (input.first >= policy.threshold) {
    if (confidence >= needed && !ambiguous) decision = 'accept';
    else if (policy.secondFinger && probes < 2) decision = 'ask-second-finger';
  }
  return { decision, confidence, needed, margin, ambiguous };
}

/** The ranks (by person, best first, 1-based) whose scores measure a search's own chance tail. */
export const COHORT_RANKS = { from: 3, to: 20 } as const;
/** Positive scores needed among those ranks to fit the tail (fewer: the scores stay as they are). */
export const COHORT_MIN_POINTS = 8;
/** Bounds of the fitted slope b (scores per 10·log10 of rank); 1 is the calibration's own. */
export const COHORT_SLOPE = { min: 1, max: 4 } as const;

/** A search's chance tail as its candidate list shows it: rank k scores about a − b·10·log10(k). */
export interface CohortTail {
  /** Where the tail puts rank 1 (a calibrated probe: 10·log10(N)). */
  intercept: number;
  /** Score per 10·log10 of rank, within COHORT_SLOPE. */
  slope: number;
}

/**
 * Fits the chance tail of one search from its persons' scores (best first, one a person); null
 * when ranks COHORT_RANKS hold fewer than COHORT_MIN_POINTS positive scores. Least squares of score
 * on 10·log10(rank).
 */
export function fitCohortTail(personScores: readonly number[]): CohortTail | null {
  let count = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let k = COHORT_RANKS.from; k <= Math.min(COHORT_RANKS.to, personScores.length); k++) {
    const y = personScores[k - 1]!;
    if (!(y > 0)) continue;
    const x = 10 * Math.log10(k);
    count++;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  if (count < COHORT_MIN_POINTS) return null;
  const varX = sxx - (sx * sx) / count;
  const fitted = varX > 0 ? -(sxy - (sx * sy) / count) / varX : COHORT_SLOPE.min;
  const slope = Math.min(COHORT_SLOPE.max, Math.max(COHORT_SLOPE.min, fitted));
  return { intercept: (sy + slope * sx) / count, slope };
}

/**
 * The map from one search's scores to the calibrated scale (see the module comment): never raises a
 * score; the identity when the tail could not be fitted.
 */
export function cohortNormalizer(personScores: readonly number[], n: number): (score: number) => number {
  const tail = fitCohortTail(personScores);
  if (!tail) return (s) => s;
  const level = 10 * Math.log10(Math.max(1, n));
  return (s) => Math.min(s, level + (s - tail.intercept) / tail.slope);
}
