/**
 * Operations 6–8: add/update, delete and get attendance events.
 *
 * Identity: an event is (employeeCode, inTime). Adding an event whose identity exists updates it
 * (outTime and shift when given, tzOffset), so a replay creates no second event. An out-only event
 * closes that employee's latest open event (no outTime, check-in not after the check-out); when
 * an event of that employee already has exactly this outTime, the out-only event is a replay and
 * succeeds without changing anything. With neither, it is INVALID_PARAMETERS (matching event
 * cannot be found).
 *
 * A batch is one SQLite transaction with prepared statements: one lookup of the batch's employees,
 * one statement per run of consecutive check-ins (json_each), one per out-only event. Each item
 * is one row written by one statement, so it is written whole or not at all; a run the database
 * refuses is redone item by item so that only the refused item fails (ERROR). Each item gets its
 * own envelope.
 */
import { DATE_TIME_PATTERN, MAX_TZ_OFFSET_MINUTES, parseDateTime, tzOffsetFromWire, tzOffsetToWire } from '../api/date-time.js';
import { lookupEmployeeCode } from '../api/employee-code.js';
import { eventShift, toNumber } from '../api/normalize.js';
import type { Envelope } from '../api/types.js';
import { isAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { answer, BadRequest, fail, isObject, ok, plural, type HandlerResult } from './envelope.js';
import { employeeCodeProblem, isValidEmployeeCode, userExists, type ServiceContext } from './context.js';

interface EventRow {
  id: number;
  employee_code: string;
  in_time: string;
  out_time: string | null;
  shift: string;
  tz_offset: number;
}

const log = logger('server:events');

const COLUMNS = 'id, employee_code, in_time, out_time, shift, tz_offset';

const ON_CONFLICT = `ON CONFLICT (employee_code, in_time) DO UPDATE SET
    out_time = COALESCE(excluded.out_time, server_events.out_time),
    shift = CASE WHEN excluded.shift_given THEN excluded.shift ELSE server_events.shift END,
    shift_given = MAX(server_events.shift_given, excluded.shift_given),
    tz_offset = excluded.tz_offset,
    in_utc = excluded.in_utc,
    updated_at = excluded.updated_at
  RETURNING ${COLUMNS}`;
const UPSERT = `INSERT INTO server_events (employee_code, in_time, out_time, in_utc, shift, shift_given, tz_offset, created_at, updated_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
  ${ON_CONFLICT}`;
/** The same upsert for a run of events at once: ?1 is a JSON array of [code, in, out, inUtc, shift, given, tz]. */
const UPSERT_MANY = `INSERT INTO server_events (employee_code, in_time, out_time, in_utc, shift, shift_given, tz_offset, created_at, updated_at)
  SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
         json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'), ?2, ?2
    FROM json_each(?1) WHERE 1
  ${ON_CONFLICT}`;
const REPLAYED_OUT = `SELECT ${COLUMNS} FROM server_events WHERE employee_code = ? AND out_time = ? ORDER BY in_utc DESC LIMIT 1`;
const LATEST_OPEN = `SELECT id FROM server_events WHERE employee_code = ? AND out_time IS NULL AND in_utc <= ? ORDER BY in_utc DESC LIMIT 1`;
const CLOSE = `UPDATE server_events SET out_time = ?, updated_at = ? WHERE id = ? RETURNING ${COLUMNS}`;

export interface CheckedEvent {
  employeeCode: string;
  inTime: string | null;
  outTime: string | null;
  inMs: number | null;
  outMs: number | null;
  shift: string;
  shiftGiven: boolean;
  tzMinutes: number;
}

type Checked = CheckedEvent | { error: string; employeeCode?: string };

function checkEvent(ctx: ServiceContext, item: unknown): Checked {
  if (!isObject(item)) return { error: 'the event is not an object' };
  const code = typeof item.employeeCode === 'string' ? lookupEmployeeCode(item.employeeCode) : item.employeeCode;
  if (!isValidEmployeeCode(code)) return { error: `employeeCode: ${employeeCodeProblem(code)}` };
  const time = (field: 'inTime' | 'outTime'): { text: string | null; ms: number | null } | string => {
    const v = item[field];
    if (v === undefined || v === null || v === '') return { text: null, ms: null };
    const ms = parseDateTime(v);
    if (ms === undefined) return `${field} "${String(v)}" is not a date-time of the form ${DATE_TIME_PATTERN}`;
    return { text: v as string, ms };
  };
  const inT = time('inTime');
  if (typeof inT === 'string') return { error: inT, employeeCode: code };
  const outT = time('outTime');
  if (typeof outT === 'string') return { error: outT, employeeCode: code };
  if (inT.text === null && outT.text === null) return { error: 'an event needs inTime or outTime', employeeCode: code };
  let tzMinutes = 0;
  if (item.tzOffset !== undefined && item.tzOffset !== null && item.tzOffset !== '') {
    const n = toNumber(item.tzOffset);
    if (n === undefined) return { error: `tzOffset must be a number (${ctx.tzOffsetUnit} east of UTC)`, employeeCode: code };
    tzMinutes = tzOffsetFromWire(n, ctx.tzOffsetUnit);
    if (Math.abs(tzMinutes) > MAX_TZ_OFFSET_MINUTES) return { error: `tzOffset ${n} ${ctx.tzOffsetUnit} is outside ±14 hours`, employeeCode: code };
  }
  if (inT.ms !== null && outT.ms !== null && outT.ms < inT.ms) return { error: 'outTime is before inTime', employeeCode: code };
  const rawShift = item.shift ?? item.shiftName;
  if (rawShift !== undefined && rawShift !== null && typeof rawShift !== 'string') return { error: 'shift must be a string', employeeCode: code };
  const named = eventShift(item);
  if (named !== null && !ctx.shifts.byName.has(named)) {
    return { error: `unknown shift "${named}"; the service knows ${[...ctx.shifts.byName.keys()].join(', ')}`, employeeCode: code };
  }
  return {
    employeeCode: code,
    inTime: inT.text,
    outTime: outT.text,
    inMs: inT.ms,
    outMs: outT.ms,
    shift: named ?? ctx.shifts.defaultShift,
    shiftGiven: named !== null,
    tzMinutes,
  };
}

export function eventFromRow(ctx: ServiceContext, r: EventRow): Record<string, unknown> {
  return { employeeCode: r.employee_code, inTime: r.in_time, outTime: r.out_time, shift: r.shift, tzOffset: tzOffsetToWire(r.tz_offset, ctx.tzOffsetUnit) };
}

function requireArray(ctx: ServiceContext, body: unknown): unknown[] {
  if (!Array.isArray(body)) throw new BadRequest('the body must be a JSON array of events');
  if (body.length > ctx.limits.maxEventsPerRequest) throw new BadRequest(`at most ${ctx.limits.maxEventsPerRequest} events per request; split the batch`);
  return body;
}

async function storeOne(ctx: ServiceContext, tx: SqliteDatabase, e: CheckedEvent, now: string): Promise<Envelope<unknown>> {
  if (e.inTime !== null) {
    const row = await tx.get<EventRow>(UPSERT, [e.employeeCode, e.inTime, e.outTime, e.inMs! - e.tzMinutes * 60_000, e.shift, e.shiftGiven ? 1 : 0, e.tzMinutes, now]);
    return ok(eventFromRow(ctx, row!), 'stored');
  }
  const replay = await tx.get<EventRow>(REPLAYED_OUT, [e.employeeCode, e.outTime]);
  if (replay) return ok(eventFromRow(ctx, replay), 'already closed with this outTime; nothing changed');
  const open = await tx.get<{ id: number }>(LATEST_OPEN, [e.employeeCode, e.outMs! - e.tzMinutes * 60_000]);
  if (!open) return fail('INVALID_PARAMETERS', `matching event cannot be found: ${e.employeeCode} has no open check-in before ${e.outTime}`);
  const row = await tx.get<EventRow>(CLOSE, [e.outTime, now, open.id]);
  return ok(eventFromRow(ctx, row!), 'closed the latest open check-in');
}

export async function addEvents(ctx: ServiceContext, body: unknown): Promise<HandlerResult> {
  const list = requireArray(ctx, body);
  const items = list.length;
  if (items === 0) return answer(fail('INVALID_PARAMETERS', 'the array of events is empty'), { items });
  const checked = list.map((item) => checkEvent(ctx, item));
  const now = new Date().toISOString();
  return ctx.db.transaction(async (tx) => {
    // One lookup for every employee of the batch (a fixed statement: the codes travel as JSON).
    const codes = [...new Set(checked.flatMap((c) => ('error' in c ? [] : [c.employeeCode])))];
    const rows = await tx.all<{ employee_code: string }>('SELECT employee_code FROM server_users WHERE employee_code IN (SELECT value FROM json_each(?))', [JSON.stringify(codes)]);
    const known = new Set(rows.map((r) => r.employee_code));
    const results: Envelope<unknown>[] = new Array<Envelope<unknown>>(items);
    // Consecutive check-ins are stored by one statement; an out-only event depends on what came
    // before it, so the run before it is stored first.
    let run: Array<{ index: number; event: CheckedEvent }> = [];
    const flush = async () => {
      if (run.length) await storeRun(ctx, tx, run, now, results);
      run = [];
    };
    for (const [index, c] of checked.entries()) {
      if ('error' in c) results[index] = fail('INVALID_PARAMETERS', c.error);
      else if (!known.has(c.employeeCode)) results[index] = fail('USER_NOT_AVAILABLE', `no user with employeeCode "${c.employeeCode}"`);
      else if (c.inTime !== null) run.push({ index, event: c });
      else {
        await flush();
        results[index] = await storeOneGuarded(ctx, tx, c, now);
      }
    }
    await flush();
    const good = results.filter((r) => r.statusCode === 'SUCCESS').length;
    return answer(ok(results, `${good} of ${items} ${plural(items, 'event')} stored`), { items });
  });
}

/** `storeOne`, with a database refusal of this one item (a constraint) as its ERROR. */
async function storeOneGuarded(ctx: ServiceContext, tx: SqliteDatabase, e: CheckedEvent, now: string): Promise<Envelope<unknown>> {
  try {
    return await storeOne(ctx, tx, e, now);
  } catch (err) {
    // SQLite undid just that statement; anything else (disk full, corruption) aborts the batch.
    if (!isAgentError(err, 'SQLITE_CONSTRAINT')) throw err;
    log.error({ err, employeeCode: e.employeeCode }, 'event refused by the database');
    return fail('ERROR', 'system error storing this event; see the service log');
  }
}

/**
 * Stores a run of check-in events with one statement. A run holding the same identity twice, or
 * one the database refuses (the statement is undone whole), is stored item by item instead.
 */
async function storeRun(ctx: ServiceContext, tx: SqliteDatabase, run: Array<{ index: number; event: CheckedEvent }>, now: string, results: Envelope<unknown>[]): Promise<void> {
  const key = (code: string, inTime: string) => `${code}\u0000${inTime}`;
  const keys = new Set(run.map((r) => key(r.event.employeeCode, r.event.inTime!)));
  if (run.length > 1 && keys.size === run.length) {
    const payload = JSON.stringify(run.map(({ event: e }) => [e.employeeCode, e.inTime, e.outTime, e.inMs! - e.tzMinutes * 60_000, e.shift, e.shiftGiven ? 1 : 0, e.tzMinutes]));
    try {
      const rows = await tx.all<EventRow>(UPSERT_MANY, [payload, now]);
      const byKey = new Map(rows.map((r) => [key(r.employee_code, r.in_time), r]));
      if (byKey.size === run.length) {
        for (const { index, event } of run) results[index] = ok(eventFromRow(ctx, byKey.get(key(event.employeeCode, event.inTime!))!), 'stored');
        return;
      }
      throw new Error(`the batch upsert returned ${byKey.size} rows for ${run.length} events`);
    } catch (err) {
      if (!isAgentError(err, 'SQLITE_CONSTRAINT')) throw err;
      log.warn({ events: run.length }, 'the database refused a run of events; storing them one by one');
    }
  }
  for (const { index, event } of run) results[index] = await storeOneGuarded(ctx, tx, event, now);
}

async function codeKnown(ctx: ServiceContext, code: string): Promise<boolean> {
  if (await userExists(ctx, code)) return true;
  return (await ctx.db.get('SELECT 1 AS x FROM server_events WHERE employee_code = ? LIMIT 1', [code])) !== undefined;
}

export async function deleteEvents(ctx: ServiceContext, code: string, body: unknown): Promise<HandlerResult> {
  const list = requireArray(ctx, body);
  const items = list.length;
  if (items === 0) return answer(fail('INVALID_PARAMETERS', 'the array of events is empty'), { items });
  const checked = list.map((item) => {
    // The path names the employee; items may leave employeeCode out.
    const withCode = isObject(item) && (item.employeeCode === undefined || item.employeeCode === null) ? { ...item, employeeCode: code } : item;
    return checkEvent(ctx, withCode);
  });
  return ctx.db.transaction(async (tx) => {
    if (!(await codeKnown(ctx, code))) return answer(fail('USER_NOT_AVAILABLE', `no user and no events with employeeCode "${code}"`), { items });
    const results: Envelope<unknown>[] = [];
    for (const c of checked) {
      if ('error' in c) {
        results.push(fail('INVALID_PARAMETERS', c.error));
        continue;
      }
      if (c.employeeCode !== code) {
        results.push(fail('INVALID_PARAMETERS', `the event's employeeCode "${c.employeeCode}" is not the one of the path ("${code}")`));
        continue;
      }
      const row =
        c.inTime !== null
          ? await tx.get<EventRow>(`SELECT ${COLUMNS} FROM server_events WHERE employee_code = ? AND in_time = ?`, [code, c.inTime])
          : await tx.get<EventRow>(REPLAYED_OUT, [code, c.outTime]);
      if (!row || (c.outTime !== null && row.out_time !== c.outTime)) {
        results.push(fail('INVALID_PARAMETERS', 'matching event cannot be found'));
        continue;
      }
      await tx.run('DELETE FROM server_events WHERE id = ?', [row.id]);
      results.push(ok(eventFromRow(ctx, row), 'deleted'));
    }
    const good = results.filter((r) => r.statusCode === 'SUCCESS').length;
    return answer(ok(results, `${good} of ${items} ${plural(items, 'event')} deleted`), { items });
  });
}

export async function getEvents(ctx: ServiceContext, query: URLSearchParams): Promise<HandlerResult> {
  const from = query.get('from');
  const to = query.get('to');
  const code = query.get('code') === null ? null : lookupEmployeeCode(query.get('code')!);
  if (parseDateTime(from) === undefined) return answer(fail('INVALID_TIME_FORMAT', `from "${from ?? ''}" is not a date-time of the form ${DATE_TIME_PATTERN}`));
  if (parseDateTime(to) === undefined) return answer(fail('INVALID_TIME_FORMAT', `to "${to ?? ''}" is not a date-time of the form ${DATE_TIME_PATTERN}`));
  const limit = ctx.limits.maxEventsReturned;
  let rows: EventRow[];
  if (code) {
    if (!(await codeKnown(ctx, code))) return answer(fail('USER_NOT_AVAILABLE', `no user and no events with employeeCode "${code}"`));
    rows = await ctx.db.all<EventRow>(`SELECT ${COLUMNS} FROM server_events WHERE employee_code = ? AND in_time BETWEEN ? AND ? ORDER BY in_time, id LIMIT ?`, [code, from, to, limit + 1]);
  } else {
    rows = await ctx.db.all<EventRow>(`SELECT ${COLUMNS} FROM server_events WHERE in_time BETWEEN ? AND ? ORDER BY in_time, employee_code, id LIMIT ?`, [from, to, limit + 1]);
  }
  const truncated = rows.length > limit;
  if (truncated) rows = rows.slice(0, limit);
  const description = truncated ? `the first ${limit} events only: narrow the range to see the rest` : `${rows.length} ${plural(rows.length, 'event')}`;
  return answer(ok(rows.map((r) => ok(eventFromRow(ctx, r))), description), { items: rows.length });
}
