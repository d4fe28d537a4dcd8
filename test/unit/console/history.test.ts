import { describe, expect, it } from 'vitest';
import { HISTORY_POINTS, MetricHistory } from '../../../src/console/history.js';
import { fleetRow, parseMetrics } from '../../../src/ops/fleet-row.js';

describe('the metric history', () => {
  it('keeps the worst value of each bucket over the window, and nothing older', () => {
    const NOW = Date.parse('2026-03-02T08:01:00.000Z'); // the middle of a 2-minute bucket
    const h = new MetricHistory(24);
    expect(h.stepMs).toBe(120_000);
    const row = (pending: number, disk: number) =>
      fleetRow('s', 't', 'online', null, parseMetrics({ queue: { pending }, system: { freeDiskMb: disk } }));
    h.add(row(3, 900), NOW - 10_000, NOW);
    h.add(row(7, 950), NOW - 5_000, NOW);
    h.add(row(1, 800), NOW - 3_600_000, NOW);
    h.add(row(99, 1), NOW - 25 * 3_600_000, NOW); // outside the window
    const v = h.view(NOW);
    const series = (name: string) => v.series.find((s) => s.name === name)!.values;
    expect(series('queuePending')).toHaveLength(HISTORY_POINTS);
    expect(series('queuePending').at(-1)).toBe(7);
    expect(series('freeDiskMb').at(-1)).toBe(900);
    expect(series('queuePending').filter((x) => x !== null)).toEqual([1, 7]);
    expect(series('cpuTempC').every((x) => x === null)).toBe(true);
    // a day later the slots have been reused: the old figures are gone
    expect(
      h
        .view(NOW + 24 * 3_600_000)
        .series.find((s) => s.name === 'queuePending')!
        .values.filter((x) => x !== null),
    ).toEqual([]);
  });
});
