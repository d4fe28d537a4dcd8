/** The ingest's metrics in the Prometheus text format: cumulative buckets, rates over a window. */
import { describe, expect, it } from 'vitest';
import { IngestMetrics, Rate } from '../../../src/ingest/metrics.js';
import { parsePrometheusText } from '../../helpers/prometheus.js';

const GAUGES = { pending: 0, oldestPendingSec: 0, connectionsUp: 1, connections: 1 };

describe('ingest metrics', () => {
  it('a histogram renders cumulative buckets, +Inf, sum and count', async () => {
    const m = new IngestMetrics([0.1, 1]);
    for (const v of [0.05, 0.5, 0.7, 3]) m.lag.observe(v);
    const lines = (await m.render(GAUGES)).split('\n').filter((l) => /^(# [A-Z]+ )?ingest_lag_seconds/.test(l));
    expect(lines).toEqual([
      '# HELP ingest_lag_seconds From the punch being recorded on the terminal to its acceptance by the attendance API',
      '# TYPE ingest_lag_seconds histogram',
      'ingest_lag_seconds_bucket{le="0.1"} 1',
      'ingest_lag_seconds_bucket{le="1"} 3',
      'ingest_lag_seconds_bucket{le="+Inf"} 4',
      'ingest_lag_seconds_sum 4.25',
      'ingest_lag_seconds_count 4',
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

  it('renders counters, dead letters by status and the gauges', async () => {
    const m = new IngestMetrics();
    m.accepted = 7;
    m.deadLetter('USER_NOT_AVAILABLE');
    m.deadLetter('USER_NOT_AVAILABLE');
    m.deadLetter('INVALID_"PAYLOAD');
    const text = await m.render({ pending: 3, oldestPendingSec: 1.23456, connectionsUp: 2, connections: 4 });
    expect(text).toMatch(/^ingest_events_accepted_total 7$/m);
    expect(text).toMatch(/^ingest_dead_letters_total\{status="USER_NOT_AVAILABLE"\} 2$/m);
    // A label value is escaped as the format wants (it was replaced with _ before prom-client).
    expect(text).toMatch(/^ingest_dead_letters_total\{status="INVALID_\\"PAYLOAD"\} 1$/m);
    expect(
      parsePrometheusText(text)
        .get('ingest_dead_letters_total')!
        .samples.map((s) => s.labels.status),
    ).toEqual(['USER_NOT_AVAILABLE', 'INVALID_"PAYLOAD']);
    expect(text).toMatch(/^ingest_oldest_pending_seconds 1.235$/m);
    expect(text).toMatch(/^ingest_connections_up 2$/m);
    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? -?[\d.]+$/);
  });

  it("a scrape shows the counts of its moment, and the registry is the ingest's own", async () => {
    const a = new IngestMetrics();
    const b = new IngestMetrics();
    a.received = 3;
    expect(await a.render(GAUGES)).toMatch(/^ingest_messages_received_total 3$/m);
    a.received = 5;
    expect(await a.render(GAUGES)).toMatch(/^ingest_messages_received_total 5$/m);
    expect(await b.render(GAUGES)).toMatch(/^ingest_messages_received_total 0$/m);
    expect(a.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});
