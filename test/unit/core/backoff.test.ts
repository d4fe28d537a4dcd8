import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay } from '../../../src/core/backoff.js';

describe('backoff', () => {
  it('grows exponentially up to the cap, with full jitter', () => {
    const o = { baseMs: 100, capMs: 5000 };
    expect(backoffCeiling(0, o)).toBe(100);
    expect(backoffCeiling(3, o)).toBe(800);
    expect(backoffCeiling(30, o)).toBe(5000);
    expect(backoffDelay(3, { ...o, random: () => 0.5 })).toBe(400);
    expect(backoffDelay(3, { ...o, random: () => 0 })).toBe(0);
  });
});
