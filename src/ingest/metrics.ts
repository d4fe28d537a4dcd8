/**
 * What the ingest counts, in the Prometheus text format (version 0.0.4) for `GET /metrics`:
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

/** Upper bounds in seconds: fine below a second, where a healthy pipeline is. */
export const LAG_BUCKETS = [
  0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300, 900, 3600,
];

export class Histogram {
  readonly buckets: readonly number[];
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(buckets: readonly number[] = LAG_BUCKETS) {
    this.buckets = buckets;
    this.counts = buckets.map(() => 0);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const i = this.buckets.findIndex((b) => v <= b);
    if (i >= 0) this.counts[i]!++;
  }

  /** Prometheus lines (cumulative buckets, then +Inf, sum, count). */
  render(name: string, help: string): string[] {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    let cumulative = 0;
    for (const [i, b] of this.buckets.entries()) {
      cumulative += this.counts[i]!;
      lines.push(`${name}_bucket{le="${b}"} ${cumulative}`);
    }
    lines.push(`${name}_bucket{le="+Inf"} ${this.count}`, `${name}_sum ${round(this.sum)}`, `${name}_count ${this.count}`);
    return lines;
  }
}

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

export class IngestMetrics {
  received = 0;
  redelivered = 0;
  accepted = 0;
  duplicates = 0;
  apiRequests = 0;
  apiFailures = 0;
  readonly deadLetters = new Map<string, number>();
  readonly lag = new Histogram();
  readonly commit = new Histogram();
  readonly acceptedRate = new Rate();
  readonly receivedRate = new Rate();

  deadLetter(status: string): void {
    this.deadLetters.set(status, (this.deadLetters.get(status) ?? 0) + 1);
  }

  render(g: IngestGauges): string {
    const counter = (name: string, help: string, v: number) => [`# HELP ${name} ${help}`, `# TYPE ${name} counter`, `${name} ${v}`];
    const gauge = (name: string, help: string, v: number) => [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${v}`];
    const dead = [
      '# HELP ingest_dead_letters_total Events refused for good and published to the dead-letter topic, by status',
      '# TYPE ingest_dead_letters_total counter',
    ];
    for (const [status, n] of [...this.deadLetters].sort())
      dead.push(`ingest_dead_letters_total{status="${status.replace(/["\\\n]/g, '_')}"} ${n}`);
    return [
      ...counter('ingest_messages_received_total', 'MQTT messages taken from the broker', this.received),
      ...counter('ingest_messages_redelivered_total', 'Messages the broker marked as redelivered (DUP)', this.redelivered),
      ...counter('ingest_events_accepted_total', 'Events the attendance API accepted', this.accepted),
      ...counter('ingest_duplicates_dropped_total', 'Repeats of an event id already accepted or in flight', this.duplicates),
      ...dead,
      ...counter('ingest_api_requests_total', 'Add-events requests to the attendance API', this.apiRequests),
      ...counter('ingest_api_failures_total', 'Add-events requests that failed as a whole (retried)', this.apiFailures),
      ...gauge('ingest_pending_events', 'Events received and not yet acknowledged', g.pending),
      ...gauge('ingest_oldest_pending_seconds', 'Age of the oldest event not yet acknowledged', round(g.oldestPendingSec)),
      ...gauge('ingest_connections_up', 'Broker connections up', g.connectionsUp),
      ...gauge('ingest_connections', 'Broker connections of this ingest', g.connections),
      ...gauge('ingest_events_accepted_per_second', 'Events accepted per second over the last 10 s', this.acceptedRate.perSecond()),
      ...gauge('ingest_messages_received_per_second', 'Messages received per second over the last 10 s', this.receivedRate.perSecond()),
      ...this.lag.render('ingest_lag_seconds', 'From the punch being recorded on the terminal to its acceptance by the attendance API'),
      ...this.commit.render('ingest_commit_seconds', 'From receipt by this ingest to acceptance by the attendance API'),
      '',
    ].join('\n');
  }
}
