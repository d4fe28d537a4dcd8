/**
 * What people and the other layers ask of the outbox, and what they decide about it: the latest
 * punch of an employee (the punch policy), one punch or a list with their deliveries, the counts
 * of `queue status` (doctor, metrics), and the dead letters and delivered punches: retried,
 * purged, pruned after the retention period.
 *
 * Tested through the `Outbox` facade: test/unit/store/outbox/queries.test.ts.
 */
import type { SqliteDatabase } from '../../core/sqlite.js';
import { monotonicMs } from '../../core/time.js';
import { currentBootId } from '../boot-id.js';
import { EVENT_COLUMNS, type EventRow, HELD, refreshStates, toEvent } from './schema.js';
import {
  CLOCK_ORDER_STATUS,
  type DeliveryInfo,
  type EventState,
  type HeldStatus,
  type ListedEvent,
  type OutboxContext,
  type OutboxEvent,
  type OutboxStatus,
} from './types.js';

/** The latest punch of an employee (any state), for the punch policy. */
export async function lastForEmployee(db: SqliteDatabase, employeeCode: string): Promise<OutboxEvent | null> {
  const row = await db.get<EventRow>(`SELECT ${EVENT_COLUMNS} FROM outbox_events e WHERE e.employee_code = ? ORDER BY e.seq DESC LIMIT 1`, [
    employeeCode,
  ]);
  return row ? toEvent(row) : null;
}

/** One punch by its id with its deliveries, null when there is none. */
export async function getEvent(db: SqliteDatabase, id: string): Promise<ListedEvent | null> {
  const row = await db.get<EventRow>(`SELECT ${EVENT_COLUMNS} FROM outbox_events e WHERE e.id = ?`, [id]);
  if (!row) return null;
  return { ...toEvent(row), deliveries: await deliveries(db, [row.seq]).then((m) => m.get(row.seq) ?? []) };
}

async function deliveries(db: SqliteDatabase, seqs: number[]): Promise<Map<number, DeliveryInfo[]>> {
  const rows = await db.all<{
    seq: number;
    sink: string;
    state: EventState;
    attempts: number;
    next_attempt_at: number;
    last_status: string | null;
    last_error: string | null;
    delivered_at: number | null;
  }>(
    'SELECT seq, sink, state, attempts, next_attempt_at, last_status, last_error, delivered_at FROM outbox_deliveries WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq, sink',
    [JSON.stringify(seqs)],
  );
  const out = new Map<number, DeliveryInfo[]>();
  for (const r of rows) {
    const list = out.get(r.seq) ?? [];
    list.push({
      sink: r.sink,
      state: r.state,
      attempts: r.attempts,
      nextAttemptAt: r.next_attempt_at,
      lastStatus: r.last_status,
      lastError: r.last_error,
      deliveredAt: r.delivered_at,
    });
    out.set(r.seq, list);
  }
  return out;
}

/**
 * Counts for `queue status`, doctor and the metrics. The held punches are split by what they
 * wait for: `bootId` is this boot, `anchoredBoots` the earlier boots that have a trusted reading
 * to correct their punches from (the time authority's anchors), `monoNowMs` measures the wait.
 */
export async function status(
  ctx: OutboxContext,
  options: { bootId?: string; monoNowMs?: number; anchoredBoots?: readonly string[] },
): Promise<OutboxStatus> {
  const { db } = ctx;
  const now = ctx.now();
  const counts = await db.all<{ state: EventState; n: number }>('SELECT state, n FROM outbox_counts');
  const n = (s: EventState) => counts.find((c) => c.state === s)?.n ?? 0;
  const oldest = await db.get<{ created_at: number }>("SELECT created_at FROM outbox_events WHERE state = 'pending' ORDER BY seq LIMIT 1");
  const last = await db.get<{ t: number | null }>('SELECT MAX(done_at) AS t FROM outbox_events WHERE done_at IS NOT NULL');
  // Per sink and state: the counters the delivery triggers keep (a count of a million index
  // entries would hold the database, and the punches waiting on it, for half a second).
  const sinkCounts = await db.all<{ sink: string; state: EventState; n: number }>(
    "SELECT sink, state, n FROM outbox_sink_counts WHERE state IN ('pending', 'dead')",
  );
  const perSink: OutboxStatus['perSink'] = {};
  for (const s of ctx.sinks) {
    const count = (state: EventState) => sinkCounts.find((c) => c.sink === s && c.state === state)?.n ?? 0;
    perSink[s] = { pending: count('pending'), dead: count('dead') };
  }
  const undelivered = n('pending') + n('dead');
  const held = await heldStatus(db, options.bootId ?? currentBootId(), options.monoNowMs ?? monotonicMs(), options.anchoredBoots ?? []);
  return {
    pending: n('pending'),
    dead: n('dead'),
    delivered: n('delivered'),
    oldestPendingAgeSec: oldest ? Math.max(0, Math.round((now - oldest.created_at) / 1000)) : null,
    lastDeliveryAt: last?.t != null ? new Date(last.t).toISOString() : null,
    unsynced: held.clock + held.earlierBoot,
    maxPending: ctx.maxPending,
    undelivered,
    capFullPercent: Math.round((undelivered / ctx.maxPending) * 1000) / 10,
    capRoom: Math.max(0, ctx.maxPending - undelivered),
    perSink,
    held,
  };
}

async function heldStatus(db: SqliteDatabase, bootId: string, monoNowMs: number, anchoredBoots: readonly string[]): Promise<HeldStatus> {
  // The partial index outbox_events_unsynced holds exactly these rows (`+state`: not the state
  // index, which would walk a million pending punches).
  const byBoot = await db.all<{ boot_id: string; n: number; mono: number }>(
    `SELECT boot_id, COUNT(*) AS n, MIN(monotonic_ms) AS mono FROM outbox_events WHERE ${HELD} AND +state = 'pending' GROUP BY boot_id`,
  );
  const linked = new Set([bootId, ...anchoredBoots]);
  // On the partial index of these dead letters (its condition must be written out to be used).
  const review = await db.get<{ n: number }>(
    `SELECT COUNT(DISTINCT seq) AS n FROM outbox_deliveries WHERE state = 'dead' AND last_status = '${CLOCK_ORDER_STATUS}'`,
  );
  const mine = byBoot.find((r) => r.boot_id === bootId);
  return {
    clock: byBoot.filter((r) => linked.has(r.boot_id)).reduce((a, r) => a + r.n, 0),
    earlierBoot: byBoot.filter((r) => !linked.has(r.boot_id)).reduce((a, r) => a + r.n, 0),
    oldestClockSec: mine ? Math.max(0, Math.round((monoNowMs - mine.mono) / 1000)) : null,
    review: review?.n ?? 0,
  };
}

/** Punches in recording order: pending ones by default, dead letters with `dead`, newest last. */
export async function list(db: SqliteDatabase, options: { dead?: boolean; delivered?: boolean; limit?: number }): Promise<ListedEvent[]> {
  const state: EventState = options.dead ? 'dead' : options.delivered ? 'delivered' : 'pending';
  const rows = await db.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM outbox_events e WHERE e.state = ? ORDER BY e.seq LIMIT ?`, [
    state,
    options.limit ?? 100,
  ]);
  const found = await deliveries(
    db,
    rows.map((r) => r.seq),
  );
  return rows.map((r) => ({ ...toEvent(r), deliveries: found.get(r.seq) ?? [] }));
}

/** Sends dead letters again (all, or the given ids): their dead deliveries become pending now. */
export async function retryDead(ctx: OutboxContext, ids?: string[]): Promise<number> {
  const now = ctx.now();
  return ctx.db.transaction(async (db) => {
    const rows = ids
      ? await db.all<{ seq: number }>("SELECT seq FROM outbox_events WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'dead'", [
          JSON.stringify(ids),
        ]) // by id, not all dead letters
      : await db.all<{ seq: number }>("SELECT seq FROM outbox_events WHERE state = 'dead'");
    if (rows.length === 0) return 0;
    const seqs = JSON.stringify(rows.map((r) => r.seq));
    await db.run(
      "UPDATE outbox_deliveries SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE state = 'dead' AND seq IN (SELECT value FROM json_each(?))",
      [seqs],
    );
    await refreshStates(db, seqs, now);
    return rows.length;
  });
}

/**
 * Deletes dead letters (`dead`) and/or delivered punches (`delivered`; the default when neither
 * is given). Pending punches are never purged.
 */
export async function purge(
  db: SqliteDatabase,
  options: { dead?: boolean; delivered?: boolean },
): Promise<{ dead: number; delivered: number }> {
  const delivered = options.delivered ?? !options.dead;
  return db.transaction(async (tx) => {
    const out = { dead: 0, delivered: 0 };
    if (options.dead) out.dead = (await tx.run("DELETE FROM outbox_events WHERE state = 'dead'")).changes;
    if (delivered) out.delivered = (await tx.run("DELETE FROM outbox_events WHERE state = 'delivered'")).changes;
    return out;
  });
}

/** Deletes delivered punches older than `retentionDays` (by delivery time). Returns the count. */
export async function prune(ctx: OutboxContext, retentionDays: number): Promise<number> {
  const cutoff = ctx.now() - retentionDays * 86_400_000;
  return ctx.db.transaction(
    async (db) =>
      (await db.run("DELETE FROM outbox_events WHERE state = 'delivered' AND done_at IS NOT NULL AND done_at < ?", [cutoff])).changes,
  );
}
