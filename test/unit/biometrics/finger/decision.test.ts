import { describe, expect, it } from 'vitest';
import {
  COHORT_SLOPE,
  DEFAULT_FINGER_DECISION,
  cohortNormalizer,
  decideIdentification,
  fitCohortTail,
  fusedToSingle,
  identificationConfidence,
} from '../../../../src/biometrics/finger/decision.js';

describe('identificationConfidence', () => {
  it('a lone strong candidate: about the score less 10·log10(N), so the same score is worth less in a bigger gallery', () => {
    const chance = -10 * Math.log10(1 - Math.exp(-1)); // ≈ 2: the second-best at the chance level of N
    expect(identificationConfidence(70, 0, 100)).toBeCloseTo(70 - 20 + chance, 6);
    expect(identificationConfidence(70, 0, 10_000)).toBeCloseTo(70 - 40 + chance, 6);
  });

  it('a second person below the chance level of N changes nothing; one above it lowers the confidence', () => {
    expect(identificationConfidence(70, 10, 10_000)).toBe(identificationConfidence(70, 0, 10_000));
    expect(identificationConfidence(70, 60, 10_000)).toBeLessThan(identificationConfidence(70, 0, 10_000) - 1);
    expect(identificationConfidence(70, 60, 10_000)).toBeGreaterThanOrEqual(10); // never below the margin
  });

  it('no first person: no confidence', () => {
    expect(identificationConfidence(null, null, 1000)).toBe(0);
  });
});

describe('fusedToSingle', () => {
  it('one finger is its own score; a sum of two is brought back to the chance tail of a sum of two', () => {
    expect(fusedToSingle(45, 1)).toBe(45);
    const x = (Math.LN10 / 10) * 80;
    const tail = Math.exp(-x) * (1 + x); // P(sum of two calibrated impostor scores ≥ 80)
    expect(fusedToSingle(80, 2)).toBeCloseTo(-10 * Math.log10(tail), 6);
    expect(fusedToSingle(80, 2)).toBeLessThan(80);
    expect(fusedToSingle(80, 2)).toBeGreaterThan(40);
  });
});

describe('decideIdentification', () => {
  const policy = DEFAULT_FINGER_DECISION; // floor 40, FPIR 1e-3: needed 30

  it('accepts a strong lone candidate', () => {
    const o = decideIdentification({ first: 90, second: 20, n: 10_000 }, policy);
    expect(o.decision).toBe('accept');
    expect(o.needed).toBeCloseTo(30, 6);
    expect(o.margin).toBe(70);
  });

  it('rejects below the floor, however far ahead', () => {
    expect(decideIdentification({ first: 39, second: null, n: 1 }, policy).decision).toBe('reject');
    expect(decideIdentification({ first: null, second: null, n: 0 }, policy)).toMatchObject({ decision: 'reject', margin: null });
  });

  it('asks for a second finger when two persons are close, and rejects when it already has two', () => {
    expect(decideIdentification({ first: 80, second: 78, n: 10_000 }, policy)).toMatchObject({
      decision: 'ask-second-finger',
      ambiguous: true,
    });
    expect(decideIdentification({ first: 80, second: 78, n: 10_000 }, policy, 2).decision).toBe('reject');
    expect(decideIdentification({ first: 80, second: 78, n: 10_000 }, { ...policy, secondFinger: false }).decision).toBe('reject');
  });

  it('two fingers spend only their share of the FPIR: the confidence needed rises by −10·log10(share)', () => {
    const share = { ...policy, secondFingerShare: 0.1 };
    expect(decideIdentification({ first: 90, second: 20, n: 10_000 }, share).needed).toBeCloseTo(30, 6);
    expect(decideIdentification({ first: 90, second: 20, n: 10_000 }, share, 2).needed).toBeCloseTo(40, 6);
    // confidence ≈ 35 with a lone candidate at 73 among 10,000: enough for one finger's 30, not for two fingers' 40
    const input = { first: 73, second: 0, n: 10_000 };
    expect(decideIdentification(input, share).decision).toBe('accept');
    expect(decideIdentification(input, share, 2).decision).toBe('reject');
    expect(decideIdentification(input, { ...share, secondFingerShare: undefined }, 2).decision).toBe('accept');
  });

  it('the same score that is accepted among 100 templates is not among a million', () => {
    expect(decideIdentification({ first: 55, second: 0, n: 100 }, policy).decision).toBe('accept');
    expect(decideIdentification({ first: 55, second: 0, n: 1_000_000 }, policy).decision).toBe('ask-second-finger');
  });
});

/** Persons' scores as a search with chance tail a − b·10·log10(k) shows them, best first (rank 1 and 2 given). */
const tailOf = (a: number, b: number, first: number, second: number, persons = 40): number[] => [
  first,
  second,
  ...Array.from({ length: persons - 2 }, (_, i) => a - b * 10 * Math.log10(i + 3)),
];

describe('fitCohortTail', () => {
  it('reads intercept and slope from ranks 3–20, whatever ranks 1 and 2 score', () => {
    const tail = fitCohortTail(tailOf(35, 2, 500, 300))!;
    expect(tail.intercept).toBeCloseTo(35, 6);
    expect(tail.slope).toBeCloseTo(2, 6);
  });

  it('keeps the slope within its bounds, and fits nothing on too few positive scores', () => {
    expect(fitCohortTail(tailOf(30, 0.3, 60, 40))!.slope).toBe(COHORT_SLOPE.min);
    expect(fitCohortTail(tailOf(150, 5, 200, 120))!.slope).toBe(COHORT_SLOPE.max);
    expect(fitCohortTail([90, 30, 20, 15, 12, 10])).toBeNull(); // a small gallery: 4 cohort scores
    expect(fitCohortTail([90, 30, ...Array.from({ length: 18 }, (_, i) => (i < 5 ? 10 - i : 0))])).toBeNull(); // mostly zeros
  });
});

describe('cohortNormalizer', () => {
  it('a search that follows the calibration keeps its scores', () => {
    const n = 1000;
    const norm = cohortNormalizer(tailOf(30, 1, 80, 25), n); // rank k at 10·log10(N/k)
    expect(norm(80)).toBeCloseTo(80, 6);
    expect(norm(25)).toBeCloseTo(25, 6);
  });

  it('never raises a score, even when the search scores below the calibration', () => {
    const norm = cohortNormalizer(tailOf(20, 1, 80, 15), 1000);
    expect(norm(80)).toBe(80);
    expect(norm(50)).toBe(50);
  });

  it('a stranger whose whole list sits high and wide is no longer taken for someone; a mate far above the same list still is', () => {
    const n = 1000;
    // SOCOFing's worst stranger (479FLt_CR): 91 first, 49 second, the rest from 43 down
    const stranger = tailOf(47, 2.5, 91, 49);
    expect(decideIdentification({ first: 91, second: 49, n }, DEFAULT_FINGER_DECISION).decision).toBe('accept');
    const norm = cohortNormalizer(stranger, n);
    const normalized = decideIdentification({ first: norm(91), second: norm(49), n }, DEFAULT_FINGER_DECISION);
    expect(normalized.decision).not.toBe('accept');
    // the same list under a mate scoring as SOCOFing's mates do (hundreds)
    const mate = decideIdentification({ first: norm(300), second: norm(49), n }, DEFAULT_FINGER_DECISION);
    expect(mate.decision).toBe('accept');
  });
});
