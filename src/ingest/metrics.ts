/**
 * What the ingest counts, in the Prometheus text format (version 0.0.4, written by prom-client)
 * for `GET /metrics`:
 *
 * | metric | type | meaning |
 * |---|---|---|
 * | ingest_messages_received_total | counter | MQTT messages taken from the broker (redeliveries included) |
 * | ingest_messages_redelivered_total | counter | of those, marked DUP by the broker (a restart, a lost connection) |
 * | ingest_events_accepted_total | counter | events the attendance API accepted (then acknowledged) |
 * | ingest_duplicates_dropped_total | counter | repeats of an event id already accepted or in flight (acknowledged without a request) |
 * | ingest_dead_letters_total{status} | counter | events refused for good, published to the dead-letter topic, then acknowledged |
 * | ingest_api_requests_total / ingest_api_failures_total | counter | add-events requests, and those that failed as a whole (retried) |
 * | ingest_pending_events | gauge | received, not yet acknowledged |
 * | ingest_oldest_pending_seconds | gauge | age of the oldest of those |
 * | ingest_connections_up / ingest_connections | gauge | broker connections up, of all |
 * | ingest_events_accepted_per_second, ingest_messages_received_per_second | gauge | over the last 10 s |
 * | ingest_lag_seconds | histogram | from recordedAt (the terminal's clock) to the API's acceptance |
 * | ingest_commit_seconds | histogram | from receipt by this ingest to the API's acceptance |
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Upper bounds in seconds: fine below a second, where a healthy pipeline is. */
export const LAG_BUCKETS = [
  0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300, 900, 3600,
];

/** Events per second over a sliding window of whole seconds. */
export class Rate {
  readonly #windowSec: number;
  readonly #slots = new Map<number, number>();

  constructor(windowSec = 10) {
    this.#windowSec = windowSec;
  }

  add(n = 1, nowMs = Date.now()): void {
    const sec = Math.floor(nowMs / 1000);
    this.#slots.set(sec, (this.#slots.get(sec) ?? 0) + n);
    for (const s of this.#slots.keys()) if (s <= sec - this.#windowSec) this.#slots.delete(s);
  }

  perSecond(nowMs = Date.now()): number {
    const sec = Math.floor(nowMs / 1000);
    let n = 0;
    for (const [s, c] of this.#slots) if (s > sec - this.#windowSec) n += c;
    return round(n / this.#windowSec);
  }
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}

export interface IngestGauges {
  pending: number;
  oldestPendingSec: number;
  connectionsUp: number;
  connections: number;
}

/**
 * The ingest's counts and its registry (one per ingest, so one per process): the histograms and
 * the dead letters by status are prom-client's own; the plain counts (read by `/health` and the
 * tests too) and the gauges are written into the registry when it is scraped.
 */
export class IngestMetrics {
  received = 0;
  redelivered = 0;
  accepted = 0;
  duplicates = 0;
  apiRequests = 0;
  apiFailures = 0;
  readonly registry = new Registry();
  readonly lag: Histogram<string>;
  readonly commit: Histogram<string>;
  readonly acceptedRate = new Rate();
  readonly receivedRate = new Rate();
  readonly #deadLetters: Counter<'status'>;
  readonly #counters: Array<[Counter<string>, () => number]>;
  readonly #gauges: Array<[Gauge<string>, (g: IngestGauges) => number]>;

  constructor(buckets: readonly number[] = LAG_BUCKETS) {
    const registers = [this.registry];
    const counter = (name: string, help: string, value: () => number): [Counter<string>, () => number] => [
      new Counter({ name, help, registers }),
      value,
    ];
    const gauge = (name: string, help: string, value: (g: IngestGauges) => number): [Gauge<string>, (g: IngestGauges) => number] => [
      new Gauge({ name, help, registers }),
      value,
    ];
    // Registered in output order.
    this.#counters = [
      counter('ingest_messages_received_total', 'MQTT messages taken from the broker', () => this.received),
      counter('ingest_messages_redelivered_total', 'Messages the broker marked as redelivered (DUP)', () => this.redelivered),
      counter('ingest_events_accepted_total', 'Events the attendance API accepted', () => this.accepted),
      counter('ingest_duplicates_dropped_total', 'Repeats of an event id already accepted or in flight', () => this.duplicates),
    ];
    this.#deadLetters = new Counter({
      name: 'ingest_dead_letters_total',
      help: 'Events refused for good and published to the dead-letter topic, by status',
      labelNames: ['status'],
      registers,
    });
    this.#counters.push(
      counter('ingest_api_requests_total', 'Add-events requests to the attendance API', () => this.apiRequests),
      counter('ingest_api_failures_total', 'Add-events requests that failed as a whole (retried)', () => this.apiFailures),
    );
    this.#gauges = [
      gauge('ingest_pending_events', 'Events received and not yet acknowledged', (g) => g.pending),
      gauge('ingest_oldest_pending_seconds', 'Age of the oldest event not yet acknowledged', (g) => round(g.oldestPendingSec)),
      gauge('ingest_connections_up', 'Broker connections up', (g) => g.connectionsUp),
      gauge('ingest_connections', 'Broker connections of this ingest', (g) => g.connections),
      gauge('ingest_events_accepted_per_second', 'Events accepted per second over the last 10 s', () => this.acceptedRate.perSecond()),
      gauge('ingest_messages_received_per_second', 'Messages received per second over the last 10 s', () => this.receivedRate.perSecond()),
    ];
    this.lag = new Histogram({
      name: 'ingest_lag_seconds',
      help: 'From the punch being recorded on the terminal to its acceptance by the attendance API',
      buckets: [...buckets],
      registers,
    });
    this.commit = new Histogram({
      name: 'ingest_commit_seconds',
      help: 'From receipt by this ingest to acceptance by the attendance API',
      buckets: [...buckets],
      registers,
    });
  }

  deadLetter(status: string): void {
    this.#deadLetters.inc({ status });
  }

  /** The exposition (text format 0.0.4), with the counts and gauges of this moment. */
  render(g: IngestGauges): Promise<string> {
    for (const [c, value] of this.#counters) {
      c.reset();
      c.inc(value());
    }
    for (const [gauge, value] of this.#gauges) gauge.set(value(g));
    return this.registry.metrics();
  }

  /** `Content-Type` of the exposition. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
