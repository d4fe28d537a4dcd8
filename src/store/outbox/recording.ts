/**
 * Recording punches: one punch in one transaction (`record`, which returns after COMMIT: with
 * `synchronous=FULL` the punch survives a power cut), or an import in chunks (`recordMany`), each
 * punch with one delivery row per configured sink.
 *
 * Size cap: when pending + dead events reach `maxPending` (default 1,000,000), `record` refuses
 * with `STORE_OUTBOX_FULL`; `recordMany` (an import) refuses the whole list before writing
 * anything when it does not fit. Nothing already recorded is ever dropped to make room.
 *
 * Tested through the `Outbox` facade: test/unit/store/outbox/recording.test.ts.
 */
import { checkEmployeeCode, EMPLOYEE_CODE_RULE, showCode } from '../../api/employee-code.js';
import { AgentError } from '../../core/errors.js';
import type { SqliteDatabase } from '../../core/sqlite.js';
import { monotonicMs } from '../../core/time.js';
import { currentBootId } from '../boot-id.js';
import { parseLocal } from '../local-time.js';
import { ULID_RE, ulid } from '../ulid.js';
import { type OutboxContext, PUNCH_SOURCES, type PunchInput } from './types.js';

const INSERT_EVENT = `INSERT INTO outbox_events (id, employee_code, direction, local_time, tz_offset, in_time, in_id, shift, source, score, terminal_id,
  created_at, clock_synced, boot_id, monotonic_ms, time_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO NOTHING`;
/**
 * The same for a chunk of an import at once: ?1 is a JSON array of the 16 values of each punch.
 * (`WHERE true`: an upsert after a SELECT needs a WHERE clause to parse.)
 */
const INSERT_EVENTS = `INSERT INTO outbox_events (id, employee_code, direction, local_time, tz_offset, in_time, in_id, shift, source, score, terminal_id,
  created_at, clock_synced, boot_id, monotonic_ms, time_source)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9,
         value ->> 10, value ->> 11, value ->> 12, value ->> 13, value ->> 14, value ->> 15
    FROM json_each(?) WHERE true ORDER BY key
  ON CONFLICT (id) DO NOTHING`;
/** One delivery per sink (?1, a JSON array) for every event after seq ?2 (the chunk just inserted). */
const INSERT_DELIVERIES_AFTER =
  'INSERT INTO outbox_deliveries (sink, seq) SELECT s.value, e.seq FROM outbox_events e, json_each(?) s WHERE e.seq > ? ORDER BY e.seq';

/** Throws what `record` would throw for this punch (`STORE_BAD_PUNCH`, `STORE_BAD_TIME`), writing nothing. */
export function validatePunch(p: PunchInput): void {
  const bad = (what: string, value: unknown, hint: string) =>
    new AgentError('STORE_BAD_PUNCH', `punch has ${what}: ${JSON.stringify(value)}`, { field: what, value }, { hint });
  const code = checkEmployeeCode(p.employeeCode);
  if (!code.ok || code.code !== p.employeeCode)
    throw bad(
      `an invalid employee code (${code.ok ? 'not in Unicode NFC' : code.problem})`,
      showCode(p.employeeCode),
      `an employee code is ${EMPLOYEE_CODE_RULE}`,
    );
  if (p.direction !== 'in' && p.direction !== 'out') throw bad('an invalid direction', p.direction, 'use in or out');
  if (!Number.isInteger(p.tzOffset) || Math.abs(p.tzOffset) > 18 * 60)
    throw bad('an invalid tzOffset', p.tzOffset, 'minutes east of UTC, between -1080 and 1080');
  parseLocal(p.localTime, p.tzOffset);
  if (p.inTime != null) parseLocal(p.inTime, p.tzOffset);
  if (!(PUNCH_SOURCES as readonly string[]).includes(p.source)) throw bad('an invalid source', p.source, `use ${PUNCH_SOURCES.join(', ')}`);
  if (p.timeSource !== undefined && p.timeSource !== 'clock' && p.timeSource !== 'manual')
    throw bad('an invalid time source', p.timeSource, 'use clock or manual');
  if (p.id !== undefined && !ULID_RE.test(p.id))
    throw bad('an invalid id', p.id, 'an id is a ULID (26 characters of Crockford base 32), or left out');
}

/**
 * Throws `STORE_OUTBOX_FULL` when `adding` more punches would pass the cap (an import checks its
 * whole file before recording any of it).
 */
export async function ensureRoom(ctx: OutboxContext, adding: number): Promise<void> {
  const undelivered = await countUndelivered(ctx.db);
  if (undelivered + adding > ctx.maxPending) throw tooMany(ctx, undelivered, adding);
}

function params(p: PunchInput, id: string, now: number): (string | number | null)[] {
  return [
    id,
    p.employeeCode,
    p.direction,
    p.localTime,
    p.tzOffset,
    p.inTime ?? null,
    p.inId ?? null,
    p.shift ?? null,
    p.source,
    p.score ?? null,
    p.terminalId,
    p.createdAt ?? now,
    p.clockSynced === false ? 0 : 1,
    p.bootId ?? currentBootId(),
    p.monotonicMs ?? monotonicMs(),
    p.timeSource ?? 'clock',
  ];
}

async function countUndelivered(db: SqliteDatabase): Promise<number> {
  const row = await db.get<{ n: number }>("SELECT COALESCE(SUM(n), 0) AS n FROM outbox_counts WHERE state IN ('pending', 'dead')");
  return row?.n ?? 0;
}

function full(ctx: OutboxContext, undelivered: number, adding: number): AgentError {
  return new AgentError(
    'STORE_OUTBOX_FULL',
    `the outbox holds ${undelivered} undelivered punches, the cap is ${ctx.maxPending}: new punches are refused (nothing recorded is dropped)`,
    { undelivered, maxPending: ctx.maxPending, adding },
    {
      hint: 'restore the connection to the upstream ("edge-agent queue status" shows what waits), retry or purge dead letters ("edge-agent queue list --dead"), or raise outbox.maxPending if the disk has room',
      retryable: true,
    },
  );
}

function tooMany(ctx: OutboxContext, undelivered: number, adding: number): AgentError {
  const room = Math.max(0, ctx.maxPending - undelivered);
  return new AgentError(
    'STORE_OUTBOX_FULL',
    `${adding} punches do not fit: the outbox holds ${undelivered} undelivered punches, the cap is ${ctx.maxPending} (room for ${room}); nothing was recorded`,
    { undelivered, maxPending: ctx.maxPending, adding, room, recorded: 0 },
    {
      hint: `import at most ${room} punches (split the file), let the backlog drain ("edge-agent queue status"), purge dead letters, or raise outbox.maxPending if the disk has room (about 300 bytes a punch)`,
      retryable: true,
    },
  );
}

/** Recording for other sinks than the reconciled set: the next `reconcileSinks` must look at every punch. */
async function forgetSinksIfOther(ctx: OutboxContext, db: SqliteDatabase): Promise<void> {
  if (ctx.otherSinks) await db.run('DELETE FROM outbox_sinks');
}

/** Inserts one punch; null when a punch with its (given) id is already recorded. */
async function insert(ctx: OutboxContext, db: SqliteDatabase, p: PunchInput, now: number): Promise<{ id: string; seq: number } | null> {
  const id = p.id ?? ulid(now);
  await forgetSinksIfOther(ctx, db);
  const { changes, lastID } = await db.run(INSERT_EVENT, params(p, id, now));
  if (changes === 0) return null;
  for (const sink of ctx.sinks) await db.run('INSERT INTO outbox_deliveries (sink, seq) VALUES (?, ?)', [sink, lastID]);
  return { id, seq: lastID };
}

/** Records one punch in one transaction; resolves after the commit. */
export async function record(ctx: OutboxContext, punch: PunchInput): Promise<{ id: string; seq: number }> {
  validatePunch(punch);
  const now = ctx.now();
  return ctx.db.transaction(async (db) => {
    const undelivered = await countUndelivered(db);
    if (undelivered >= ctx.maxPending) throw full(ctx, undelivered, 1);
    const inserted = await insert(ctx, db, punch, now);
    if (!inserted)
      throw new AgentError(
        'STORE_BAD_PUNCH',
        `a punch with id ${punch.id} is already recorded`,
        { id: punch.id },
        { hint: 'give each punch its own id, or leave it out for a new one' },
      );
    return inserted;
  });
}

/**
 * Records many punches (an import of a paper log), one transaction per thousand, each chunk two
 * statements. Every punch is validated and the cap is checked for the whole list before anything
 * is written: a list whose new punches do not fit is refused with `STORE_OUTBOX_FULL` and nothing
 * recorded. A punch whose given id is already recorded is skipped (an import run again after an
 * interruption records only what is missing) and takes no room; `skipped` counts them. Should
 * punches recorded meanwhile by the running agent fill the outbox during the import, the chunk
 * that would pass the cap is refused and the error's context says how many were recorded.
 */
export async function recordMany(
  ctx: OutboxContext,
  punches: PunchInput[],
  chunkSize: number,
  onProgress?: (recorded: number, total: number) => void,
): Promise<{ ids: string[]; skipped: number }> {
  punches.forEach((p, i) => {
    try {
      validatePunch(p);
    } catch (err) {
      if (err instanceof AgentError)
        throw new AgentError(err.code, `punch ${i + 1}: ${err.message}`, { ...err.context, index: i }, { hint: err.hint, cause: err });
      throw err;
    }
  });
  let present = 0;
  for (let start = 0; start < punches.length; start += chunkSize)
    present += await countRecorded(ctx.db, punches.slice(start, start + chunkSize));
  await ensureRoom(ctx, punches.length - present);
  const ids: string[] = [];
  const sinks = JSON.stringify(ctx.sinks);
  let skipped = 0;
  for (let start = 0; start < punches.length; start += chunkSize) {
    const chunk = punches.slice(start, start + chunkSize);
    const now = ctx.now();
    try {
      const chunkIds = await ctx.db.transaction(async (db) => {
        const undelivered = await countUndelivered(db);
        // Punches already recorded under their given id take no room (a repeated import).
        const present = await countRecorded(db, chunk);
        if (undelivered + chunk.length - present > ctx.maxPending) throw full(ctx, undelivered, chunk.length - present);
        await forgetSinksIfOther(ctx, db);
        const last = (await db.get<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM outbox_events'))?.seq ?? 0;
        await db.run(INSERT_EVENTS, [JSON.stringify(chunk.map((p) => params(p, p.id ?? ulid(now), now)))]);
        await db.run(INSERT_DELIVERIES_AFTER, [sinks, last]);
        const out = (await db.all<{ id: string }>('SELECT id FROM outbox_events WHERE seq > ? ORDER BY seq', [last])).map((r) => r.id);
        return out;
      });
      ids.push(...chunkIds);
      skipped += chunk.length - chunkIds.length;
      onProgress?.(ids.length + skipped, punches.length);
    } catch (err) {
      if (err instanceof AgentError) Object.assign(err.context, { recorded: ids.length, skipped });
      throw err;
    }
  }
  return { ids, skipped };
}

/** How many of these punches are already recorded under their given id (by the id index). */
export async function countRecorded(db: SqliteDatabase, punches: readonly PunchInput[]): Promise<number> {
  const given = punches.flatMap((p) => (p.id ? [p.id] : []));
  if (given.length === 0) return 0;
  return (
    (
      await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM outbox_events WHERE id IN (SELECT value FROM json_each(?))', [
        JSON.stringify(given),
      ])
    )?.n ?? 0
  );
}
