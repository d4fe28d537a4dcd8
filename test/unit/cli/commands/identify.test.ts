import { describe, expect, it } from 'vitest';
import { scoreText } from '../../../../src/cli/commands/identify.js';

describe('identify prints a score a person can read', () => {
  it('a finger score as a whole number, an iris distance with two decimals', () => {
    expect(scoreText(301.50179434443885, 'finger')).toBe('302');
    expect(scoreText(0.18349, 'iris')).toBe('0.18');
    expect(scoreText(null, 'finger')).toBe('n/a');
  });
});
