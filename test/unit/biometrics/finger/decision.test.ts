import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FINGER_DECISION,
  decideIdentification,
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

  it('the same score that is accepted among 100 templates is not among a million', () => {
    expect(decideIdentification({ first: 55, second: 0, n: 100 }, policy).decision).toBe('accept');
    expect(decideIdentification({ first: 55, second: 0, n: 1_000_000 }, policy).decision).toBe('ask-second-finger');
  });
});
