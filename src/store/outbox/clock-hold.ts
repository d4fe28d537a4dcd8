/**
 * The clock hold: a punch taken while the wall clock was not trusted (`clockSynced=false`) is held
 * from delivery, whatever its age, until its time is corrected from the monotonic clock
 * (`correctWithin`, run by the time authority in src/terminal/time-authority.ts) or a person
 * releases it as it is (`releaseWithin`, `edge-agent queue release-unsynced`: it stays marked).
 * A check-out whose time is before its check-in is not delivered: `flagForReview` makes it a dead
 * letter with status `CLOCK_ORDER` (the uploader checks every batch with `orderProblems`).
 *
 * Tested through the `Outbox` facade: test/unit/store/outbox/clock-hold.test.ts.
 */
import type { SqliteDatabase } from '../../core/sqlite.js';
import { formatLocal, parseLocal } from '../local-time.js';
import { HELD, OUTCOME_VALUE, refreshStates } from './schema.js';
import { CLOCK_ORDER_STATUS, type CorrectionAnchor, type OutboxContext, type OutboxEvent } from './types.js';

/**
 * Inside the caller's transaction (the time authority changes its state in the same one):
 * every undelivered unsynced punch of a boot in `anchors` gets the local time
 * `anchor.wall + (monoAtPunch − anchor.mono)` (and that as its recording time) and is marked
 * corrected; check-outs that carry such a check-in's inTime get the corrected one. Returns how
 * many were corrected.
 */
export async function correctWithin(db: SqliteDatabase, anchors: ReadonlyMap<string, CorrectionAnchor>): Promise<number> {
  if (anchors.size === 0) return 0;
  const rows = await db.all<{ seq: number; id: string; tz_offset: number; monotonic_ms: number; boot_id: string }>(
    `SELECT seq, id, tz_offset, monotonic_ms, boot_id FROM outbox_events
     WHERE ${HELD} AND state <> 'delivered' AND boot_id IN (SELECT value FROM json_each(?))`,
    [JSON.stringify([...anchors.keys()])],
  );
  if (rows.length === 0) return 0;
  const fixed = rows.map((r) => {
    const a = anchors.get(r.boot_id)!;
    const instant = a.wallMs + (r.monotonic_ms - a.monoMs);
    return { seq: r.seq, id: r.id, instant, local: formatLocal(instant, r.tz_offset) };
  });
  const json = JSON.stringify(fixed);
  await db.run(
    `UPDATE outbox_events AS e SET local_time = j.local, created_at = j.instant, clock_corrected = 1
     FROM (SELECT value ->> 'seq' AS seq, value ->> 'local' AS local, value ->> 'instant' AS instant FROM json_each(?)) AS j
     WHERE e.seq = j.seq`,
    [json],
  );
  // By the corrected check-ins' ids (the partial index of in_id), never a pass over the backlog.
  await db.run(
    `UPDATE outbox_events SET in_time = (SELECT value ->> 'local' FROM json_each(?) WHERE value ->> 'id' = outbox_events.in_id)
     WHERE in_id IN (SELECT value ->> 'id' FROM json_each(?)) AND state <> 'delivered'`,
    [json, json],
  );
  return rows.length;
}

/** Boots that have unsynced punches still held (to keep their anchors). */
export async function heldBoots(db: SqliteDatabase): Promise<string[]> {
  return (await db.all<{ boot_id: string }>(`SELECT DISTINCT boot_id FROM outbox_events WHERE ${HELD} AND state <> 'delivered'`)).map(
    (r) => r.boot_id,
  );
}

/**
 * Inside the caller's transaction: a person's (or the configured rule's) decision to send held
 * punches as they are. They keep `clock_synced = 0` and get `clock_released = 1`. Only punches
 * of other boots than `exceptBoot` (null: every boot), and only `ids` when given. Returns how many.
 */
export async function releaseWithin(db: SqliteDatabase, options: { exceptBoot: string | null; ids?: readonly string[] }): Promise<number> {
  const { changes } = await db.run(
    `UPDATE outbox_events SET clock_released = 1
     WHERE ${HELD} AND state <> 'delivered' AND (? IS NULL OR boot_id <> ?) AND (? IS NULL OR id IN (SELECT value FROM json_each(?)))`,
    [options.exceptBoot, options.exceptBoot, options.ids ? 1 : null, JSON.stringify(options.ids ?? [])],
  );
  return changes;
}

/**
 * Check-outs of `items` whose time is before that of the check-in they close (a step of the
 * clock, a released punch, a mistyped manual time): delivered, they would be a new, impossible
 * event. Compared as instants, with the check-in's own offset. Read only.
 */
export async function orderProblems(db: SqliteDatabase, items: readonly OutboxEvent[]): Promise<Array<{ seq: number; reason: string }>> {
  const outs = items.filter((i) => i.direction === 'out' && (i.inId || i.inTime));
  if (outs.length === 0) return [];
  const ins = new Map(
    (
      await db.all<{ id: string; local_time: string; tz_offset: number }>(
        'SELECT id, local_time, tz_offset FROM outbox_events WHERE id IN (SELECT value FROM json_each(?))',
        [JSON.stringify(outs.map((o) => o.inId).filter(Boolean))],
      )
    ).map((r) => [r.id, r]),
  );
  const problems: Array<{ seq: number; reason: string }> = [];
  for (const o of outs) {
    const row = o.inId ? ins.get(o.inId) : undefined;
    const inLocal = row?.local_time ?? o.inTime;
    if (!inLocal) continue;
    const inAt = parseLocal(inLocal, row?.tz_offset ?? o.tzOffset);
    if (parseLocal(o.localTime, o.tzOffset) < inAt) {
      problems.push({
        seq: o.seq,
        reason: `check-out at ${o.localTime} is before its check-in at ${inLocal} (a clock step or a mistyped time): not sent; review it, then purge it and record the right punches with "edge-agent punch --at"`,
      });
    }
  }
  return problems;
}

/** Makes punches dead letters with status CLOCK_ORDER and the reason, for a person's review. */
export async function flagForReview(ctx: OutboxContext, problems: ReadonlyArray<{ seq: number; reason: string }>): Promise<number> {
  if (problems.length === 0) return 0;
  const now = ctx.now();
  return ctx.db.transaction(async (db) => {
    // By the items' seqs (the temporary table), never a join driven by the pending backlog.
    await db.run(
      "INSERT OR REPLACE INTO temp.outbox_outcomes (seq, dead, status, error, next) SELECT value ->> 'seq', 1, ?, value ->> 'reason', NULL FROM json_each(?)",
      [CLOCK_ORDER_STATUS, JSON.stringify(problems)],
    );
    const { changes } = await db.run(
      `UPDATE outbox_deliveries SET state = 'dead', last_status = ?, last_error = ${OUTCOME_VALUE('error')}
       WHERE state = 'pending' AND seq IN (SELECT seq FROM temp.outbox_outcomes)`,
      [CLOCK_ORDER_STATUS],
    );
    await db.run('DELETE FROM temp.outbox_outcomes');
    await refreshStates(db, JSON.stringify(problems.map((p) => p.seq)), now);
    return changes;
  });
}
