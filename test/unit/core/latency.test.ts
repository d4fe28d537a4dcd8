import { describe, expect, it } from 'vitest';
import { LatencyWindow } from '../../../src/core/latency.js';

describe('LatencyWindow', () => {
  it('gives nearest-rank percentiles over the last N values', () => {
    const w = new LatencyWindow(100);
    expect(w.percentile(95)).toBeNull();
    for (let i = 1; i <= 100; i++) w.add(i);
    expect(w.percentile(50)).toBe(50);
    expect(w.percentile(95)).toBe(95);
    for (let i = 0; i < 100; i++) w.add(1000);
    expect(w.percentile(50)).toBe(1000);
    expect(w.count).toBe(100);
  });
});
