/** The ingest's metrics in the Prometheus text format: cumulative buckets, rates over a window. */
import { describe, expect, it } from 'vitest';
import { Histogram, IngestMetrics, Rate } from '../../../src/ingest/metrics.js';

describe('ingest metrics', () => {
  it('a histogram renders cumulative buckets, +Inf, sum and count', () => {
    const h = new Histogram([0.1, 1]);
    for (const v of [0.05, 0.5, 0.7, 3]) h.observe(v);
    expect(h.render('x_seconds', 'help')).toEqual([
      '# HELP x_seconds help',
      '# TYPE x_seconds histogram',
      'x_seconds_bucket{le="0.1"} 1',
      'x_seconds_bucket{le="1"} 3',
      'x_seconds_bucket{le="+Inf"} 4',
      'x_seconds_sum 4.25',
      'x_seconds_count 4',
    ]);
  });

  it('a rate counts the last 10 whole seconds only', () => {
    const r = new Rate(10);
    r.add(50, 1_000);
    r.add(50, 9_500);
    expect(r.perSecond(9_900)).toBe(10);
    expect(r.perSecond(15_000)).toBe(5);
    expect(r.perSecond(30_000)).toBe(0);
  });

  it('renders counters, dead letters by status and the gauges', () => {
    const m = new IngestMetrics();
    m.accepted = 7;
    m.deadLetter('USER_NOT_AVAILABLE');
    m.deadLetter('USER_NOT_AVAILABLE');
    m.deadLetter('INVALID_"PAYLOAD');
    const text = m.render({ pending: 3, oldestPendingSec: 1.23456, connectionsUp: 2, connections: 4 });
    expect(text).toMatch(/^ingest_events_accepted_total 7$/m);
    expect(text).toMatch(/^ingest_dead_letters_total\{status="USER_NOT_AVAILABLE"\} 2$/m);
    expect(text).toMatch(/^ingest_dead_letters_total\{status="INVALID__PAYLOAD"\} 1$/m);
    expect(text).toMatch(/^ingest_oldest_pending_seconds 1.235$/m);
    expect(text).toMatch(/^ingest_connections_up 2$/m);
    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? -?[\d.]+$/);
  });
});
