import { describe, expect, it } from 'vitest';
import { SeededRandom, mixSeed } from '../../../../src/biometrics/image/seeded-random.js';

describe('seeded randomness', () => {
  it('seeded randomness is reproducible and seeds mix', () => {
    const a = new SeededRandom(5),
      b = new SeededRandom(5);
    expect([a.next(), a.gauss()]).toEqual([b.next(), b.gauss()]);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
  });
});
