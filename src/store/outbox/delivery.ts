/**
 * Delivery's side of the outbox: the deliveries made to match the configured sinks
 * (`reconcileSinks`), the next batch for a sink in per-employee order (`nextBatch`), and a batch's
 * outcomes (`applyResults`, `noteFailure`).
 *
 * Cost: every write of a batch is driven by the batch's ids (an `IN` list of seqs, or the
 * connection's temporary table `outbox_outcomes` for per-item statuses), so recording a batch's
 * outcomes costs O(items), whatever the backlog (test/unit/store/outbox.test.ts checks the
 * query plans, `nextBatch`'s walk of the index of open deliveries included).
 *
 * Tested through the `Outbox` facade: test/unit/store/outbox/delivery.test.ts.
 */
import type { SqliteDatabase } from '../../core/sqlite.js';
import { EVENT_COLUMNS, type EventRow, OUTCOME_VALUE, refreshStates, SEQS, toEvent } from './schema.js';
import type { ItemResult, OutboxContext, OutboxItem } from './types.js';

/** How many rows `nextBatch` looks at per call at most, so a long blocked head cannot stall a call. */
const MAX_SCAN_ROWS = 200_000;

/** The sink set the deliveries were last reconciled with, sorted (empty: not known). */
export async function reconciledSinks(db: SqliteDatabase): Promise<string[]> {
  return (await db.all<{ sink: string }>('SELECT sink FROM outbox_sinks ORDER BY sink')).map((r) => r.sink);
}

/** `sorted` (sorted) holds the same sinks as `sinks` (distinct, any order). */
export function sameSinks(sorted: readonly string[], sinks: readonly string[]): boolean {
  const other = [...sinks].sort();
  return sorted.length === other.length && sorted.every((s, i) => s === other[i]);
}

/**
 * Makes the deliveries match the configured sinks: undelivered punches get a row for each sink
 * added since they were recorded, and lose their pending rows for sinks no longer configured.
 * The sink set is remembered (`outbox_sinks`): with the same set as last time this reads one
 * small table and touches no punch, so a start with a million pending costs nothing here. A
 * process that records with another sink set forgets the remembered one (see recording.ts).
 */
export async function reconcileSinks(ctx: OutboxContext, sinks: readonly string[]): Promise<void> {
  const now = ctx.now();
  const wanted = [...new Set(sinks)].sort();
  await ctx.db.transaction(async (db) => {
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
export async function nextBatch(
  db: SqliteDatabase,
  sink: string,
  limit: number,
  now: number,
  busyEmployees?: ReadonlySet<string>,
): Promise<OutboxItem[]> {
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
    const rows = await db.all<{ seq: number; code: string; next: number; cs: number; cc: number; cr: number }>(
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
  const rows = await db.all<EventRow & { attempts: number }>(
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
export async function applyResults(ctx: OutboxContext, sink: string, results: ItemResult[], now: number): Promise<void> {
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
  await ctx.db.transaction(
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
      if (ctx.sinks.length === 1 && ctx.sinks[0] === sink) {
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
export async function noteFailure(db: SqliteDatabase, sink: string, seqs: number[], error: string): Promise<void> {
  if (seqs.length === 0) return;
  await db.transaction(
    (tx) =>
      tx.run(
        `UPDATE outbox_deliveries SET attempts = attempts + 1, last_error = ? WHERE sink = ? AND state = 'pending' AND seq IN (${SEQS})`,
        [error, sink, JSON.stringify(seqs)],
      ),
    { durable: false },
  );
}
