/**
 * The uploader drains the outbox to every configured sink, each sink in its own loop so a broker
 * that is down never slows the API (and the other way round).
 *
 * One round of a sink: take up to `batchSize` due items in recording order, keeping per-employee
 * order (see `Outbox.nextBatch`), hand them to the sink, and apply the per-item outcomes in one
 * transaction. Outcomes:
 * - delivered → done for this sink (the punch is done when every sink has it);
 * - dead → dead letter with status and description, until `queue retry`;
 * - retry → this item (and the later items of the same employee) waits its own backoff, the
 *   others go on.
 * A batch carries at most one item per employee, so a check-out never travels with (or before)
 * an unacknowledged check-in of the same person.
 * Time: punches whose time is not trusted are never claimed (the outbox holds them until
 * corrected or released); while the time authority settles (`gate.open()` false: its first
 * judgement, a clock step being judged) nothing is claimed at all; and a check-out found before
 * its check-in is not sent but flagged for review (a dead letter with status CLOCK_ORDER).
 * A whole-request failure (the sink throws) leaves the batch pending and backs the sink off
 * (exponential, full jitter, `retryAfterMs` of a 429 honoured), without counting against any item.
 *
 * `stop()` lets the in-flight batches finish for `stopGraceMs`, then aborts them: whatever was
 * not acknowledged stays pending (released), so SIGTERM never loses or doubles anything, and
 * SIGKILL at any moment only means a batch is sent again (the upstreams deduplicate).
 */
import { AgentError, toAgentError } from '../core/errors.js';
import { backoffDelay } from '../core/backoff.js';
import { TypedEmitter } from '../core/events.js';
import { LatencyWindow } from '../core/latency.js';
import { logger } from '../core/logger.js';
import { sleep } from '../core/time.js';
import type { ItemResult, Outbox, OutboxItem } from '../store/outbox.js';
import type { ItemOutcome, Sink } from './sink.js';

const log = logger('upload:uploader');

/** The time authority as the uploader asks it: may punches be claimed now? */
export interface DeliveryGate {
  open(): boolean;
}

export interface UploaderOptions {
  outbox: Outbox;
  sinks: Sink[];
  /** Nothing is claimed while it is closed (the daemon passes its time authority). Default: always open. */
  gate?: DeliveryGate;
  batchSize?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** How often an idle sink looks for punches recorded by other processes. Default 1000 ms. */
  idlePollMs?: number;
  /** How long `stop()` lets in-flight batches finish before releasing them. Default 5000 ms. */
  stopGraceMs?: number;
  random?: () => number;
  now?: () => number;
}

/** What the uploader did since it started (the terminal's metrics, `upload`). */
export interface UploaderMetrics {
  /** Batches whose per-item outcomes were recorded. */
  batches: number;
  delivered: number;
  dead: number;
  retried: number;
  /** Time to record one batch's outcomes in the outbox (one transaction), over the last 1,024 batches. */
  recordOutcomesP50Ms: number | null;
  recordOutcomesP95Ms: number | null;
  recordOutcomesMaxMs: number | null;
}

export interface UploaderEvents extends Record<string, unknown> {
  delivered: { sink: string; count: number; ids: string[] };
  dead: { sink: string; id: string; employeeCode: string; status: string; description: string };
  review: { ids: string[]; reasons: string[] };
  error: { sink: string; error: AgentError; retryInMs: number; batchSize: number };
}

interface SinkLoop {
  sink: Sink;
  running: Promise<void>;
  inflight: AbortController | null;
  wake: (() => void) | null;
  /** Whole-request failures in a row (drives the sink's backoff). */
  failures: number;
  /** Current batch size: halved while answered failures repeat, doubled back on success. */
  size: number;
}

/**
 * Whole-request failures where the upstream answered (or hung) and an item of the batch may be
 * the cause: the batch is split to find it. Refused connections and rate limits are not.
 */
const ISOLATABLE = new Set(['API_HTTP_5XX', 'API_BAD_RESPONSE', 'API_TIMEOUT', 'API_HTTP_4XX', 'UPLOAD_SINK_BROKEN']);

export class Uploader extends TypedEmitter<UploaderEvents> {
  readonly outbox: Outbox;
  readonly sinks: readonly Sink[];
  readonly #batchSize: number;
  readonly #backoff: { baseMs: number; capMs: number; random?: () => number };
  readonly #idlePollMs: number;
  readonly #stopGraceMs: number;
  readonly #now: () => number;
  readonly #gate: DeliveryGate | null;
  readonly #loops = new Map<string, SinkLoop>();
  /** Loop state of `runOnce` callers (tests, tools) that did not `start()`. */
  readonly #spare = new Map<string, SinkLoop>();
  readonly #stop = new AbortController();
  readonly #recordOutcomes = new LatencyWindow(1024);
  readonly #counts = { batches: 0, delivered: 0, dead: 0, retried: 0 };
  #recordOutcomesMax: number | null = null;
  #started = false;
  readonly #onRecorded = () => this.wake();

  constructor(options: UploaderOptions) {
    super();
    this.outbox = options.outbox;
    this.sinks = options.sinks;
    this.#batchSize = options.batchSize ?? 200;
    this.#backoff = {
      baseMs: options.backoffBaseMs ?? 1000,
      capMs: options.backoffCapMs ?? 300_000,
      ...(options.random ? { random: options.random } : {}),
    };
    this.#idlePollMs = options.idlePollMs ?? 1000;
    this.#stopGraceMs = options.stopGraceMs ?? 5000;
    this.#now = options.now ?? Date.now;
    this.#gate = options.gate ?? null;
  }

  /** Starts one loop per sink (connecting sinks that keep a connection). */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await this.outbox.reconcileSinks(this.sinks.map((s) => s.name));
    for (const sink of this.sinks) await sink.start?.();
    this.outbox.on('recorded', this.#onRecorded);
    for (const sink of this.sinks) {
      const loop: SinkLoop = { sink, running: Promise.resolve(), inflight: null, wake: null, failures: 0, size: this.#batchSize };
      loop.running = this.#run(loop).catch((err) =>
        log.error({ err: toAgentError(err).toJSON(), sink: sink.name }, 'uploader loop ended by an error'),
      );
      this.#loops.set(sink.name, loop);
    }
  }

  metrics(): UploaderMetrics {
    return {
      ...this.#counts,
      recordOutcomesP50Ms: this.#recordOutcomes.percentile(50),
      recordOutcomesP95Ms: this.#recordOutcomes.percentile(95),
      recordOutcomesMaxMs: this.#recordOutcomesMax === null ? null : Math.round(this.#recordOutcomesMax * 10) / 10,
    };
  }

  /** Ends idle waits so new punches go at once (backoff waits are kept). */
  wake(): void {
    for (const loop of this.#loops.values()) loop.wake?.();
  }

  /** One round for one sink: returns how many items were handed over (0 when nothing was due). */
  async runOnce(sink: Sink, signal: AbortSignal = new AbortController().signal): Promise<number> {
    const loop = this.#loops.get(sink.name) ??
      this.#spare.get(sink.name) ?? { sink, running: Promise.resolve(), inflight: null, wake: null, failures: 0, size: this.#batchSize };
    this.#spare.set(sink.name, loop);
    return this.#round(loop, signal);
  }

  async #round(loop: SinkLoop, signal: AbortSignal): Promise<number> {
    const batch = await this.#claim(loop, undefined);
    if (batch.length === 0) return 0;
    await this.#deliver(loop, batch, signal);
    return batch.length;
  }

  /**
   * The next batch, unless the time authority is settling; check-outs found before their
   * check-in leave it as dead letters for review (they would be a new, impossible event).
   */
  async #claim(loop: SinkLoop, busy: ReadonlySet<string> | undefined): Promise<OutboxItem[]> {
    if (this.#gate && !this.#gate.open()) return [];
    const batch = await this.outbox.nextBatch(loop.sink.name, loop.size, this.#now(), busy);
    const problems = await this.outbox.orderProblems(batch);
    if (problems.length === 0) return batch;
    await this.outbox.flagForReview(problems);
    const flagged = new Set(problems.map((p) => p.seq));
    const ids = batch.filter((b) => flagged.has(b.seq)).map((b) => b.id);
    log.warn(
      { sink: loop.sink.name, ids, reasons: problems.map((p) => p.reason) },
      'check-out before its check-in: not sent, kept as a dead letter (CLOCK_ORDER) for review',
    );
    this.emit('review', { ids, reasons: problems.map((p) => p.reason) });
    return batch.filter((b) => !flagged.has(b.seq));
  }

  /** Hands one batch over and applies its outcomes; throws (with `retryInMs`) on a whole-request failure. */
  async #deliver(loop: SinkLoop, batch: OutboxItem[], signal: AbortSignal): Promise<void> {
    const { sink } = loop;
    let outcomes: ItemOutcome[];
    try {
      outcomes = await sink.deliver(batch, { signal });
      if (outcomes.length !== batch.length) {
        throw new AgentError(
          'UPLOAD_SINK_BROKEN',
          `sink ${sink.name} answered ${outcomes.length} outcomes for ${batch.length} items`,
          { sink: sink.name },
          { retryable: true },
        );
      }
    } catch (err) {
      const e = toAgentError(err, 'UPLOAD_FAILED', { sink: sink.name });
      if (signal.aborted) return; // released: the batch stays pending as it is
      // The service's own Retry-After wins over our backoff cap (bounded to an hour against nonsense).
      const retryAfter = typeof e.context.retryAfterMs === 'number' ? Math.min(e.context.retryAfterMs, 3_600_000) : 0;
      const delay = Math.max(retryAfter, backoffDelay(loop.failures++, this.#backoff));
      (e.retryable ? log.warn : log.error).call(
        log,
        { err: e.toJSON(), sink: sink.name, batch: batch.length, retryInMs: delay },
        `delivery to ${sink.name} failed`,
      );
      // An 'error' event without a listener would throw (EventEmitter rule): emit only when heard.
      if (this.listenerCount('error') > 0) this.emit('error', { sink: sink.name, error: e, retryInMs: delay, batchSize: batch.length });
      await this.outbox
        .noteFailure(
          sink.name,
          batch.map((b) => b.seq),
          `${e.code}: ${e.message}`,
        )
        .catch(() => undefined);
      if (ISOLATABLE.has(e.code) && loop.failures >= 2) {
        // The same kind of answer again: perhaps one item makes the upstream fail. Halve the
        // batches until it is alone, then let that item back off on its own so the others go.
        if (batch.length > 1) loop.size = Math.max(1, Math.floor(batch.length / 2));
        else {
          const item = batch[0]!;
          await this.outbox
            .applyResults(sink.name, [
              {
                seq: item.seq,
                outcome: 'retry',
                status: e.code,
                error: `${e.code}: ${e.message}`,
                nextAttemptAt: this.#now() + backoffDelay(item.attempts, this.#backoff),
              },
            ])
            .catch(() => undefined);
          log.warn(
            { sink: sink.name, id: item.id, employeeCode: item.employeeCode, err: e.code },
            'this punch alone makes the upstream fail: it backs off on its own, the others go on',
          );
        }
      }
      throw Object.assign(e, { retryInMs: delay });
    }
    loop.failures = 0;
    loop.size = Math.min(this.#batchSize, loop.size * 2);
    const results = this.#results(sink.name, batch, outcomes);
    const t0 = performance.now();
    await this.outbox.applyResults(sink.name, results, this.#now());
    const took = performance.now() - t0;
    this.#recordOutcomes.add(took);
    this.#recordOutcomesMax = Math.max(this.#recordOutcomesMax ?? 0, took);
    this.#counts.batches++;
    for (const r of results) this.#counts[r.outcome === 'retry' ? 'retried' : r.outcome]++;
    const delivered = batch.filter((_, i) => results[i]!.outcome === 'delivered');
    if (delivered.length) this.emit('delivered', { sink: sink.name, count: delivered.length, ids: delivered.map((d) => d.id) });
    // One log line per batch, not per punch: a backlog of refused punches must not flood the
    // journal (a hundred thousand lines) nor spend the drain's time on them; `queue list --dead`
    // has every one.
    const refused: Array<{ id: string; employeeCode: string; status: string; reason: string }> = [];
    results.forEach((r, i) => {
      if (r.outcome === 'dead') {
        const item = batch[i]!;
        refused.push({ id: item.id, employeeCode: item.employeeCode, status: r.status, reason: r.error });
        this.emit('dead', { sink: sink.name, id: item.id, employeeCode: item.employeeCode, status: r.status, description: r.error });
      }
    });
    if (refused.length) {
      const byStatus: Record<string, number> = {};
      for (const r of refused) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      log.warn(
        { sink: sink.name, count: refused.length, byStatus, first: refused.slice(0, 3) },
        `${refused.length === 1 ? 'punch' : `${refused.length} punches`} refused for good: kept as dead letters (edge-agent queue list --dead)`,
      );
    }
  }

  #results(sinkName: string, batch: OutboxItem[], outcomes: ItemOutcome[]): ItemResult[] {
    const now = this.#now();
    return batch.map((item, i) => {
      const o = outcomes[i]!;
      if (o.outcome === 'delivered') return { seq: item.seq, outcome: 'delivered' };
      if (o.outcome === 'dead') return { seq: item.seq, outcome: 'dead', status: o.status, error: o.description };
      const next = now + backoffDelay(item.attempts, this.#backoff);
      log.debug({ sink: sinkName, id: item.id, status: o.status ?? null, retryAt: next }, 'item to be retried');
      return { seq: item.seq, outcome: 'retry', status: o.status ?? null, error: o.description, nextAttemptAt: next };
    });
  }

  /**
   * The loop of one sink, two batches deep: while batch N is with the sink, batch N+1 (other
   * employees only) is read and sent, so our database work overlaps the upstream's. Batch N+2 is
   * read only after N's outcomes are committed.
   */
  async #run(loop: SinkLoop): Promise<void> {
    const stop = this.#stop.signal;
    const ac = new AbortController();
    loop.inflight = ac;
    type Flight = { done: Promise<number>; employees: Set<string> };
    const launch = (batch: OutboxItem[]): Flight => ({
      employees: new Set(batch.map((b) => b.employeeCode)),
      done: this.#deliver(loop, batch, ac.signal).then(
        () => 0,
        (err: unknown) => {
          const retryIn = (err as { retryInMs?: number }).retryInMs;
          if (retryIn === undefined) log.error({ err: toAgentError(err).toJSON(), sink: loop.sink.name }, 'uploader round failed');
          return retryIn ?? this.#backoff.baseMs;
        },
      ),
    });
    let flight: Flight | null = null;
    while (!stop.aborted) {
      let batch: OutboxItem[] = [];
      let retryIn = 0;
      try {
        batch = await this.#claim(loop, flight?.employees);
      } catch (err) {
        log.error({ err: toAgentError(err).toJSON(), sink: loop.sink.name }, 'reading the outbox failed');
        retryIn = this.#backoff.baseMs;
      }
      const next = batch.length && !stop.aborted ? launch(batch) : null;
      const hadFlight = flight !== null;
      if (flight) retryIn = Math.max(retryIn, await flight.done);
      flight = next;
      if (stop.aborted) break;
      if (retryIn > 0) {
        if (flight) retryIn = Math.max(retryIn, await flight.done);
        flight = null;
        await sleep(retryIn, stop).catch(() => undefined);
      } else if (!flight && !hadFlight) await this.#idle(loop);
    }
    if (flight) await flight.done;
    loop.inflight = null;
  }

  #idle(loop: SinkLoop): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#stop.signal.removeEventListener('abort', done);
        loop.wake = null;
        resolve();
      };
      const timer = setTimeout(done, this.#idlePollMs);
      loop.wake = done;
      this.#stop.signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Stops the loops: in-flight batches get `stopGraceMs` to finish, then are aborted and stay
   * pending. Closes the sinks.
   */
  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    this.outbox.off('recorded', this.#onRecorded);
    this.#stop.abort();
    const all = Promise.all([...this.#loops.values()].map((l) => l.running));
    const within = async (ms: number): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
      try {
        return await Promise.race([all.then(() => true), expired]);
      } finally {
        clearTimeout(timer);
      }
    };
    if (!(await within(this.#stopGraceMs))) {
      log.warn({ graceMs: this.#stopGraceMs }, 'releasing in-flight batches: they stay pending');
      for (const l of this.#loops.values()) l.inflight?.abort();
      await within(2000);
    }
    for (const sink of this.sinks) await sink.close().catch(() => undefined);
    this.#loops.clear();
  }
}
