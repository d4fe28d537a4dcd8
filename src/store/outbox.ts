/**
 * The outbox: every punch the terminal takes, durable before the person gets feedback, until
 * every configured sink (the attendance API, MQTT) has it.
 *
 * Two tables (component 'outbox' of the agent database):
 * - `outbox_events`: one row per punch. `seq` (the rowid) is the order of recording and the
 *   order of delivery per employee; `id` is a ULID, the identity downstream (dedupe key on MQTT).
 *   `state` is the summary: `pending` (some sink still to deliver), `dead` (some sink refused it
 *   for good), `delivered` (every sink has it).
 * - `outbox_deliveries`: one row per punch and sink with its own state, attempts, next attempt
 *   time and last error.
 * `outbox_counts` keeps the number of events per state and `outbox_sink_counts` the number of
 * deliveries per sink and state, both maintained by triggers, so the size cap and `status()` cost
 * the same with ten rows or a million. `outbox_sinks` is the set of sinks the deliveries were last
 * reconciled with, so a start with an unchanged `upstream` does no work per row.
 *
 * Cost: every write of a batch is driven by the batch's ids (an `IN` list of seqs, or the
 * connection's temporary table `outbox_outcomes` for per-item statuses), so recording a batch's
 * outcomes costs O(items), whatever the backlog (test/unit/store/outbox-plans.test.ts checks the
 * query plans).
 *
 * Size cap: when pending + dead events reach `maxPending` (default 1,000,000), `record` refuses
 * with `STORE_OUTBOX_FULL`; `recordMany` (an import) refuses the whole list before writing
 * anything when it does not fit. Nothing already recorded is ever dropped to make room.
 *
 * Clock hold: a punch taken while the wall clock was not trusted (`clockSynced=false`) is held
 * from delivery, whatever its age, until its time is corrected from the monotonic clock
 * (`correctWithin`, run by the time authority in src/daemon/clock.ts) or a person releases it as
 * it is (`releaseWithin`, `edge-agent queue release-unsynced`: it stays marked). A check-out
 * whose time is before its check-in is not delivered: `flagForReview` makes it a dead letter
 * with status `CLOCK_ORDER` (the uploader checks every batch with `orderProblems`).
 *
 * Every write is one transaction (`SqliteDatabase.transaction`); `record` returns after COMMIT,
 * which with `synchronous=FULL` means the punch survives a power cut.
 */
import { AgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { correctWithin, flagForReview, heldBoots, orderProblems, releaseWithin } from './outbox/clock-hold.js';
import { getEvent, lastForEmployee, list, prune, purge, retryDead, status } from './outbox/queries.js';
import { countRecorded, ensureRoom, record, recordMany, validatePunch } from './outbox/recording.js';
import {
  EVENT_COLUMNS,
  type EventRow,
  OUTBOX_MIGRATIONS,
  OUTCOME_VALUE,
  OUTCOMES_TABLE,
  refreshStates,
  SEQS,
  toEvent,
} from './outbox/schema.js';
import {
  type CorrectionAnchor,
  DEFAULT_MAX_PENDING,
  type ItemResult,
  type ListedEvent,
  type OutboxEvent,
  type OutboxItem,
  type OutboxOptions,
  type OutboxContext,
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

/** The sink set the deliveries were last reconciled with, sorted (empty: not known). */
async function reconciledSinks(db: SqliteDatabase): Promise<string[]> {
  return (await db.all<{ sink: string }>('SELECT sink FROM outbox_sinks ORDER BY sink')).map((r) => r.sink);
}

/** `sorted` (sorted) holds the same sinks as `sinks` (distinct, any order). */
function sameSinks(sorted: readonly string[], sinks: readonly string[]): boolean {
  const other = [...sinks].sort();
  return sorted.length === other.length && sorted.every((s, i) => s === other[i]);
}

/** How many rows `nextBatch` looks at per call at most, so a long blocked head cannot stall a call. */
const MAX_SCAN_ROWS = 200_000;

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

  /**
   * Makes the deliveries match the configured sinks: undelivered punches get a row for each sink
   * added since they were recorded, and lose their pending rows for sinks no longer configured.
   * The sink set is remembered (`outbox_sinks`): with the same set as last time this reads one
   * small table and touches no punch, so a start with a million pending costs nothing here. A
   * process that records with another sink set forgets the remembered one (see outbox/recording.ts).
   */
  async reconcileSinks(sinks: readonly string[]): Promise<void> {
    const now = this.#ctx.now();
    const wanted = [...new Set(sinks)].sort();
    await this.db.transaction(async (db) => {
      if (sameSinks(await reconciledSinks(db), wanted)) return;
      const json = JSON.stringify(wanted);
      const stale = await db.all<{ seq: number }>(
        "SELECT DISTINCT seq FROM outbox_deliveries WHERE state = 'pending' AND sink NOT IN (SELECT value FROM json_each(?))",
        [json],
      );
      for (const sink of wanted) {
        await db.run("INSERT OR IGNORE INTO outbox_deliveries (sink, seq) SELECT ?, seq FROM outbox_events WHERE state <> 'delivered'", [
          sink,
        ]);
      }
      if (stale.length) {
        await db.run("DELETE FROM outbox_deliveries WHERE state = 'pending' AND sink NOT IN (SELECT value FROM json_each(?))", [json]);
        await refreshStates(db, JSON.stringify(stale.map((r) => r.seq)), now);
      }
      await db.run('DELETE FROM outbox_sinks');
      await db.run('INSERT INTO outbox_sinks (sink) SELECT value FROM json_each(?)', [json]);
    });
  }

  /**
   * The next items for `sink`, in recording order, keeping per-employee order: at most one item
   * per employee per batch (a check-out never travels before its check-in was acknowledged), and
   * once an employee has a pending item that is not due yet (backing off) or held (its time not
   * trusted and not corrected or released, whatever its age), none of that employee's later items
   * are taken. Dead letters do not block.
   */
  async nextBatch(sink: string, limit: number, now: number = this.#ctx.now(), busyEmployees?: ReadonlySet<string>): Promise<OutboxItem[]> {
    const chosen: number[] = [];
    // Employees with an item in flight (a batch not yet answered) take no further item now.
    const blocked = new Set<string>(busyEmployees);
    const page = limit * 2 + 8;
    let after = 0;
    let scanned = 0;
    // Scan narrow rows in recording order; SQLite itself skips the employees already blocked, so
    // a long run of one employee's punches costs a C loop, not JavaScript objects. The walk goes
    // through the index of open deliveries (INDEXED BY): planned without statistics, SQLite took
    // the primary key from the first seq and stepped over every settled delivery on every batch.
    while (chosen.length < limit && scanned < MAX_SCAN_ROWS) {
      const rows = await this.db.all<{ seq: number; code: string; next: number; cs: number; cc: number; cr: number }>(
        `SELECT d.seq, e.employee_code AS code, d.next_attempt_at AS next, e.clock_synced AS cs, e.clock_corrected AS cc, e.clock_released AS cr
         FROM outbox_deliveries d INDEXED BY outbox_deliveries_open JOIN outbox_events e ON e.seq = d.seq
         WHERE d.sink = ? AND d.state = 'pending' AND d.seq > ? AND e.employee_code NOT IN (SELECT value FROM json_each(?))
         ORDER BY d.seq LIMIT ?`,
        [sink, after, JSON.stringify([...blocked]), page],
      );
      for (const r of rows) {
        if (blocked.has(r.code)) continue;
        // One item per employee per batch (the next waits until this one is acknowledged); an
        // item backing off or held for the clock blocks its employee's later items.
        blocked.add(r.code);
        const held = r.cs === 0 && r.cc === 0 && r.cr === 0;
        if (held || r.next > now) continue;
        chosen.push(r.seq);
        if (chosen.length >= limit) break;
      }
      scanned += rows.length;
      if (rows.length < page) break;
      after = rows[rows.length - 1]!.seq;
    }
    if (chosen.length === 0) return [];
    const rows = await this.db.all<EventRow & { attempts: number }>(
      `SELECT ${EVENT_COLUMNS}, d.attempts FROM outbox_deliveries d JOIN outbox_events e ON e.seq = d.seq
       WHERE d.sink = ? AND d.seq IN (SELECT value FROM json_each(?)) ORDER BY d.seq`,
      [sink, JSON.stringify(chosen)],
    );
    return rows.map((r) => ({ ...toEvent(r), attempts: r.attempts }));
  }

  /**
   * Applies one sink's outcomes for a batch in one transaction. Every statement finds its rows by
   * the batch's seqs (primary key lookups), never by scanning the pending backlog: the per-item
   * statuses of dead letters and retries go through the temporary table `outbox_outcomes`.
   * The commit does not wait for the disk (the punches themselves did): after a power cut the
   * batch may be sent again, which the upstreams deduplicate, as after SIGKILL.
   */
  async applyResults(sink: string, results: ItemResult[], now: number = this.#ctx.now()): Promise<void> {
    if (results.length === 0) return;
    const delivered: number[] = [];
    const dead: number[] = [];
    const outcomes: Array<[number, number, string | null, string, number | null]> = [];
    for (const r of results) {
      if (r.outcome === 'delivered') delivered.push(r.seq);
      else if (r.outcome === 'dead') {
        dead.push(r.seq);
        outcomes.push([r.seq, 1, r.status, r.error, null]);
      } else outcomes.push([r.seq, 0, r.status ?? null, r.error, r.nextAttemptAt]);
    }
    await this.db.transaction(
      async (db) => {
        if (delivered.length) {
          await db.run(
            `UPDATE outbox_deliveries SET state = 'delivered', attempts = attempts + 1, delivered_at = ?, last_status = 'SUCCESS', last_error = NULL WHERE sink = ? AND state = 'pending' AND seq IN (${SEQS})`,
            [now, sink, JSON.stringify(delivered)],
          );
        }
        if (outcomes.length) {
          await db.run(
            'INSERT OR REPLACE INTO temp.outbox_outcomes (seq, dead, status, error, next) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)',
            [JSON.stringify(outcomes)],
          );
          if (dead.length) {
            await db.run(
              `UPDATE outbox_deliveries SET state = 'dead', attempts = attempts + 1, last_status = ${OUTCOME_VALUE('status')}, last_error = ${OUTCOME_VALUE('error')}
             WHERE sink = ? AND state = 'pending' AND seq IN (SELECT seq FROM temp.outbox_outcomes WHERE dead = 1)`,
              [sink],
            );
          }
          if (outcomes.length > dead.length) {
            await db.run(
              `UPDATE outbox_deliveries SET attempts = attempts + 1, next_attempt_at = ${OUTCOME_VALUE('next')}, last_status = ${OUTCOME_VALUE('status')}, last_error = ${OUTCOME_VALUE('error')}
             WHERE sink = ? AND state = 'pending' AND seq IN (SELECT seq FROM temp.outbox_outcomes WHERE dead = 0)`,
              [sink],
            );
          }
          await db.run('DELETE FROM temp.outbox_outcomes');
        }
        if (this.sinks.length === 1 && this.sinks[0] === sink) {
          // One sink: the punch's state is this delivery's state; no need to look at other sinks.
          if (delivered.length)
            await db.run(`UPDATE outbox_events SET state = 'delivered', done_at = ? WHERE state = 'pending' AND seq IN (${SEQS})`, [
              now,
              JSON.stringify(delivered),
            ]);
          if (dead.length)
            await db.run(`UPDATE outbox_events SET state = 'dead' WHERE state = 'pending' AND seq IN (${SEQS})`, [JSON.stringify(dead)]);
        } else if (delivered.length || dead.length) {
          await refreshStates(db, JSON.stringify([...delivered, ...dead]), now);
        }
      },
      { durable: false },
    ); // lost on a power cut, the batch is sent again and the upstream deduplicates
  }

  /** Records a whole-request failure against a batch without counting it as an item outcome. */
  async noteFailure(sink: string, seqs: number[], error: string): Promise<void> {
    if (seqs.length === 0) return;
    await this.db.transaction(
      (db) =>
        db.run(
          `UPDATE outbox_deliveries SET attempts = attempts + 1, last_error = ? WHERE sink = ? AND state = 'pending' AND seq IN (${SEQS})`,
          [error, sink, JSON.stringify(seqs)],
        ),
      { durable: false },
    );
  }
}
