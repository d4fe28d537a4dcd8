import { describe, expect, it } from 'vitest';
import { scoreLabel, scoreText } from '../../../src/core/identification.js';

describe('a score a person can read', () => {
  it('a finger score as a whole number, an iris distance with two decimals', () => {
    expect(scoreText(301.50179434443885, 'finger')).toBe('302');
    expect(scoreText(0.18349, 'iris')).toBe('0.18');
    expect(scoreText(null, 'finger')).toBe('n/a');
    expect(scoreText(Number.NaN, 'iris')).toBe('n/a');
  });

  it('names what the figure is: a distance for an eye, a score for a finger', () => {
    expect(scoreLabel(0.07971329139807465, 'iris')).toBe('distance 0.08');
    expect(scoreLabel(142.4, 'finger')).toBe('score 142');
  });
});
