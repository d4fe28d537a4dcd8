/**
 * The outbox: every punch the terminal takes, durable before the person gets feedback, until
 * every configured sink (the attendance API, MQTT) has it.
 *
 * This class is the facade every caller imports; the work is done by one module per concern in
 * `outbox/`, on the state the facade holds (`OutboxContext`):
 * - `schema.ts`: the tables (`outbox_events`, one row per punch; `outbox_deliveries`, one per
 *   punch and sink; counters kept by triggers), their migrations and the SQL the others share;
 * - `recording.ts`: a punch in one transaction, an import in chunks, the size cap;
 * - `queries.ts`: list, get, status, dead letters (retry, purge) and the pruning of delivered ones;
 * - `clock-hold.ts`: punches held for the clock, their correction or release, check-outs before
 *   their check-in flagged for review;
 * - `delivery.ts`: the deliveries reconciled with the configured sinks, batches, their outcomes.
 * Their tests mirror them in test/unit/store/outbox/; test/unit/store/outbox.test.ts checks
 * the query plans of every statement a batch runs.
 *
 * Every write is one transaction (`SqliteDatabase.transaction`); `record` returns after COMMIT,
 * which with `synchronous=FULL` means the punch survives a power cut.
 */
import { AgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { correctWithin, flagForReview, heldBoots, orderProblems, releaseWithin } from './outbox/clock-hold.js';
import { applyResults, nextBatch, noteFailure, reconcileSinks, reconciledSinks, sameSinks } from './outbox/delivery.js';
import { getEvent, lastForEmployee, list, prune, purge, retryDead, status } from './outbox/queries.js';
import { countRecorded, ensureRoom, record, recordMany, validatePunch } from './outbox/recording.js';
import { OUTBOX_MIGRATIONS, OUTCOMES_TABLE } from './outbox/schema.js';
import {
  type CorrectionAnchor,
  DEFAULT_MAX_PENDING,
  type ItemResult,
  type ListedEvent,
  type OutboxContext,
  type OutboxEvent,
  type OutboxItem,
  type OutboxOptions,
  type OutboxStatus,
  type PunchInput,
} from './outbox/types.js';

export { OUTBOX_MIGRATIONS } from './outbox/schema.js';
export {
  CLOCK_ORDER_STATUS,
  type CorrectionAnchor,
  DEFAULT_MAX_PENDING,
  type DeliveryInfo,
  type Direction,
  type EventState,
  type HeldStatus,
  type ItemResult,
  type ListedEvent,
  type OutboxEvent,
  type OutboxItem,
  type OutboxOptions,
  type OutboxStatus,
  PUNCH_SOURCES,
  type PunchInput,
  type PunchSource,
  type TimeSource,
} from './outbox/types.js';

export class Outbox extends TypedEmitter<{ recorded: { id: string; seq: number } }> {
  readonly db: SqliteDatabase;
  readonly sinks: readonly string[];
  readonly maxPending: number;
  readonly #ctx: OutboxContext;

  private constructor(db: SqliteDatabase, options: OutboxOptions) {
    super();
    this.db = db;
    this.sinks = [...new Set(options.sinks ?? ['api'])];
    if (this.sinks.length === 0)
      throw new AgentError('STORE_NO_SINKS', 'the outbox needs at least one sink', {}, { hint: 'set upstream to api, mqtt or both' });
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.#ctx = { db, sinks: this.sinks, maxPending: this.maxPending, now: options.now ?? Date.now, otherSinks: false };
  }

  /** Migrates component 'outbox' of `db` and returns the outbox on it. */
  static async open(db: SqliteDatabase, options: OutboxOptions = {}): Promise<Outbox> {
    await db.migrate('outbox', OUTBOX_MIGRATIONS);
    await db.exec(OUTCOMES_TABLE);
    const outbox = new Outbox(db, options);
    const known = await reconciledSinks(db);
    outbox.#ctx.otherSinks = known.length > 0 && !sameSinks(known, outbox.sinks);
    return outbox;
  }

  // Recording (outbox/recording.ts).

  /** Throws what `record` would throw for this punch (`STORE_BAD_PUNCH`, `STORE_BAD_TIME`), writing nothing. */
  validate(p: PunchInput): void {
    validatePunch(p);
  }

  /** Throws `STORE_OUTBOX_FULL` when `adding` more punches would pass the cap. */
  ensureRoom(adding: number): Promise<void> {
    return ensureRoom(this.#ctx, adding);
  }

  /** Records one punch in one transaction; resolves after the commit. */
  async record(punch: PunchInput): Promise<{ id: string; seq: number }> {
    const result = await record(this.#ctx, punch);
    this.emit('recorded', result);
    return result;
  }

  /** Records many punches (an import), checked whole against the cap first; skips ids already recorded. */
  async recordMany(
    punches: PunchInput[],
    chunkSize = 1000,
    onProgress?: (recorded: number, total: number) => void,
  ): Promise<{ ids: string[]; skipped: number }> {
    const result = await recordMany(this.#ctx, punches, chunkSize, onProgress);
    if (result.ids.length) this.emit('recorded', { id: result.ids[result.ids.length - 1]!, seq: -1 });
    return result;
  }

  /** How many of these punches are already recorded under their given id. */
  countRecorded(punches: readonly PunchInput[], db: SqliteDatabase = this.db): Promise<number> {
    return countRecorded(db, punches);
  }

  // Queries, dead letters, purge and prune (outbox/queries.ts).

  /** The latest punch of an employee (any state), for the punch policy. */
  lastForEmployee(employeeCode: string): Promise<OutboxEvent | null> {
    return lastForEmployee(this.db, employeeCode);
  }

  /** One punch by its id, with its deliveries. */
  get(id: string): Promise<ListedEvent | null> {
    return getEvent(this.db, id);
  }

  /** Counts for `queue status`, doctor and the metrics, the held punches split by what they wait for. */
  status(options: { bootId?: string; monoNowMs?: number; anchoredBoots?: readonly string[] } = {}): Promise<OutboxStatus> {
    return status(this.#ctx, options);
  }

  /** Punches in recording order: pending ones by default, dead letters with `dead`, newest last. */
  list(options: { dead?: boolean; delivered?: boolean; limit?: number } = {}): Promise<ListedEvent[]> {
    return list(this.db, options);
  }

  /** Sends dead letters again (all, or the given ids): their dead deliveries become pending now. */
  retryDead(ids?: string[]): Promise<number> {
    return retryDead(this.#ctx, ids);
  }

  /** Deletes dead letters and/or delivered punches (delivered by default); never pending ones. */
  purge(options: { dead?: boolean; delivered?: boolean } = {}): Promise<{ dead: number; delivered: number }> {
    return purge(this.db, options);
  }

  /** Deletes delivered punches older than `retentionDays` (by delivery time). Returns the count. */
  prune(retentionDays: number): Promise<number> {
    return prune(this.#ctx, retentionDays);
  }

  // The clock hold (outbox/clock-hold.ts).

  /**
   * The clock synchronized: rewrites the local time of this boot's undelivered unsynced punches
   * as `wallNow − (monoNow − monoAtPunch)` and marks them corrected. Returns how many.
   */
  async correctUnsynced(at: { bootId: string; wallNowMs: number; monoNowMs: number }): Promise<number> {
    return this.db.transaction((db) => this.correctWithin(db, new Map([[at.bootId, { wallMs: at.wallNowMs, monoMs: at.monoNowMs }]])));
  }

  /** Inside the caller's transaction: corrects the held punches of the boots in `anchors`. Returns how many. */
  correctWithin(db: SqliteDatabase, anchors: ReadonlyMap<string, CorrectionAnchor>): Promise<number> {
    return correctWithin(db, anchors);
  }

  /** Boots that have unsynced punches still held (to keep their anchors). */
  heldBoots(db: SqliteDatabase = this.db): Promise<string[]> {
    return heldBoots(db);
  }

  /** Inside the caller's transaction: sends held punches as they are, by decision. Returns how many. */
  releaseWithin(db: SqliteDatabase, options: { exceptBoot: string | null; ids?: readonly string[] }): Promise<number> {
    return releaseWithin(db, options);
  }

  /** Check-outs of `items` whose time is before that of the check-in they close. Read only. */
  orderProblems(items: readonly OutboxEvent[]): Promise<Array<{ seq: number; reason: string }>> {
    return orderProblems(this.db, items);
  }

  /** Makes punches dead letters with status CLOCK_ORDER and the reason, for a person's review. */
  flagForReview(problems: ReadonlyArray<{ seq: number; reason: string }>): Promise<number> {
    return flagForReview(this.#ctx, problems);
  }

  // Delivery: sinks, batches, outcomes (outbox/delivery.ts).

  /** Makes the deliveries match the configured sinks (nothing to do when they did last time). */
  reconcileSinks(sinks: readonly string[]): Promise<void> {
    return reconcileSinks(this.#ctx, sinks);
  }

  /** The next items for `sink`, in recording order, at most one per employee, none past a blocked one. */
  nextBatch(sink: string, limit: number, now: number = this.#ctx.now(), busyEmployees?: ReadonlySet<string>): Promise<OutboxItem[]> {
    return nextBatch(this.db, sink, limit, now, busyEmployees);
  }

  /** Applies one sink's outcomes for a batch in one transaction. */
  applyResults(sink: string, results: ItemResult[], now: number = this.#ctx.now()): Promise<void> {
    return applyResults(this.#ctx, sink, results, now);
  }

  /** Records a whole-request failure against a batch without counting it as an item outcome. */
  noteFailure(sink: string, seqs: number[], error: string): Promise<void> {
    return noteFailure(this.db, sink, seqs, error);
  }
}
