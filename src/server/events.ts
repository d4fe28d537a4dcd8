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
 * A batch is one transaction of the store (SQLite or PostgreSQL): one lookup of the batch's
 * employees, one statement per run of consecutive check-ins, one per out-only event. Each item
 * is one row written by one statement, so it is written whole or not at all; a run the database
 * refuses is split in halves and each half stored again, down to the refused items alone, so that
 * only those fail (ERROR) and a few refusals in a run of 200 cost tens of statements, not 200.
 * Each item gets its own envelope.
 *
 * Several replicas on one database: the identity is a unique key (two replicas storing the same
 * event leave one row), and the employees of a batch's out-only events are locked for the
 * transaction, so that two replicas never close the same check-in with different check-outs.
 *
 * Tested in test/integration/api-contract.test.ts (operations 6-8: mixed batches item by item,
 * replays, out-only events, runs of check-ins with refusals).
 */
import { DATE_TIME_PATTERN, MAX_TZ_OFFSET_MINUTES, parseDateTime, tzOffsetFromWire, tzOffsetToWire } from '../api/date-time.js';
import { lookupEmployeeCode } from '../api/employee-code.js';
import { eventShift, toNumber } from '../api/normalize.js';
import type { Envelope } from '../api/types.js';
import { logger } from '../core/logger.js';
import { answer, BadRequest, fail, isObject, ok, plural, type HandlerResult } from './envelope.js';
import { employeeCodeProblem, isValidEmployeeCode, type ServiceContext } from './context.js';
import type { EventRow, EventUpsert, StoreOps } from './store/store.js';

const log = logger('server:events');

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
    if (Math.abs(tzMinutes) > MAX_TZ_OFFSET_MINUTES)
      return { error: `tzOffset ${n} ${ctx.tzOffsetUnit} is outside ±14 hours`, employeeCode: code };
  }
  if (inT.ms !== null && outT.ms !== null && outT.ms < inT.ms) return { error: 'outTime is before inTime', employeeCode: code };
  const rawShift = item.shift ?? item.shiftName;
  if (rawShift !== undefined && rawShift !== null && typeof rawShift !== 'string')
    return { error: 'shift must be a string', employeeCode: code };
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
  return {
    employeeCode: r.employee_code,
    inTime: r.in_time,
    outTime: r.out_time,
    shift: r.shift,
    tzOffset: tzOffsetToWire(r.tz_offset, ctx.tzOffsetUnit),
  };
}

function requireArray(ctx: ServiceContext, body: unknown): unknown[] {
  if (!Array.isArray(body)) throw new BadRequest('the body must be a JSON array of events');
  if (body.length > ctx.limits.maxEventsPerRequest)
    throw new BadRequest(`at most ${ctx.limits.maxEventsPerRequest} events per request; split the batch`);
  return body;
}

function toUpsert(e: CheckedEvent): EventUpsert {
  return {
    employeeCode: e.employeeCode,
    inTime: e.inTime!,
    outTime: e.outTime,
    inUtc: e.inMs! - e.tzMinutes * 60_000,
    shift: e.shift,
    shiftGiven: e.shiftGiven,
    tzMinutes: e.tzMinutes,
  };
}

async function storeOne(ctx: ServiceContext, tx: StoreOps, e: CheckedEvent, now: string): Promise<Envelope<unknown>> {
  if (e.inTime !== null) {
    const [row] = await tx.upsertEvents([toUpsert(e)], now);
    return ok(eventFromRow(ctx, row!), 'stored');
  }
  const replay = await tx.eventClosedAt(e.employeeCode, e.outTime!);
  if (replay) return ok(eventFromRow(ctx, replay), 'already closed with this outTime; nothing changed');
  // The check-in found may be closed by a check-in+check-out of another replica before this
  // update: then the next latest open one is looked for.
  for (let i = 0; i < 5; i++) {
    const open = await tx.latestOpenEvent(e.employeeCode, e.outMs! - e.tzMinutes * 60_000);
    if (open === undefined)
      return fail('INVALID_PARAMETERS', `matching event cannot be found: ${e.employeeCode} has no open check-in before ${e.outTime}`);
    const row = await tx.closeEvent(open, e.outTime!, now);
    if (row) return ok(eventFromRow(ctx, row), 'closed the latest open check-in');
  }
  return fail('ERROR', 'the open check-ins of this employee kept changing while closing one; send the event again');
}

export async function addEvents(ctx: ServiceContext, body: unknown): Promise<HandlerResult> {
  const list = requireArray(ctx, body);
  const items = list.length;
  if (items === 0) return answer(fail('INVALID_PARAMETERS', 'the array of events is empty'), { items });
  const checked = list.map((item) => checkEvent(ctx, item));
  const now = new Date().toISOString();
  const closing = [...new Set(checked.flatMap((c) => ('error' in c || c.inTime !== null ? [] : [c.employeeCode])))];
  return ctx.store.transaction(async (tx) => {
    await tx.lockEmployees(closing);
    // One lookup for every employee of the batch.
    const known = await tx.knownUsers([...new Set(checked.flatMap((c) => ('error' in c ? [] : [c.employeeCode])))]);
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

/** `storeOne`, with a database refusal of this one item (a constraint, a trigger) as its ERROR. */
async function storeOneGuarded(ctx: ServiceContext, tx: StoreOps, e: CheckedEvent, now: string): Promise<Envelope<unknown>> {
  const r = await tx.attempt(() => storeOne(ctx, tx, e, now));
  if ('value' in r) return r.value;
  log.error({ err: r.refused, employeeCode: e.employeeCode }, 'event refused by the database');
  return fail('ERROR', 'system error storing this event; see the service log');
}

/**
 * Stores a run of check-in events: one statement for each stretch of it in which no identity
 * repeats (a batch holding a check-in and, later, its check-out with inTime is two statements, the
 * second applied after the first, as item by item). A statement the database refuses (undone
 * whole) is split in halves, each stored the same way (see `storePart`), so that only the refused
 * items fail.
 */
async function storeRun(
  ctx: ServiceContext,
  tx: StoreOps,
  run: Array<{ index: number; event: CheckedEvent }>,
  now: string,
  results: Envelope<unknown>[],
): Promise<void> {
  const key = (code: string, inTime: string) => `${code}\u0000${inTime}`;
  let part: typeof run = [];
  let keys = new Set<string>();
  for (const item of run) {
    const k = key(item.event.employeeCode, item.event.inTime!);
    if (keys.has(k)) {
      await storePart(ctx, tx, part, now, results, key);
      part = [];
      keys = new Set();
    }
    part.push(item);
    keys.add(k);
  }
  await storePart(ctx, tx, part, now, results, key);
}

async function storePart(
  ctx: ServiceContext,
  tx: StoreOps,
  part: Array<{ index: number; event: CheckedEvent }>,
  now: string,
  results: Envelope<unknown>[],
  key: (code: string, inTime: string) => string,
  depth = 0,
): Promise<void> {
  if (part.length === 0) return;
  if (part.length === 1) {
    results[part[0]!.index] = await storeOneGuarded(ctx, tx, part[0]!.event, now);
    return;
  }
  const stored = await tx.attempt(() =>
    tx.upsertEvents(
      part.map((r) => toUpsert(r.event)),
      now,
    ),
  );
  if ('value' in stored) {
    const byKey = new Map(stored.value.map((r) => [key(r.employee_code, r.in_time), r]));
    if (byKey.size !== part.length) throw new Error(`the batch upsert returned ${byKey.size} rows for ${part.length} events`);
    for (const { index, event } of part)
      results[index] = ok(eventFromRow(ctx, byKey.get(key(event.employeeCode, event.inTime!))!), 'stored');
    return;
  }
  // Refused (undone whole): halve it until the refused items are alone. A statement the database
  // refuses costs as much as one it stores, so a run of 200 with 4 refusals is some 50
  // statements instead of 200, and the refusals' log lines are the refused items' only.
  if (depth === 0) log.warn({ events: part.length }, 'the database refused a run of events; storing it in halves to find the refused ones');
  const mid = Math.ceil(part.length / 2);
  await storePart(ctx, tx, part.slice(0, mid), now, results, key, depth + 1);
  await storePart(ctx, tx, part.slice(mid), now, results, key, depth + 1);
}

export async function deleteEvents(ctx: ServiceContext, code: string, body: unknown): Promise<HandlerResult> {
  const list = requireArray(ctx, body);
  const items = list.length;
  if (items === 0) return answer(fail('INVALID_PARAMETERS', 'the array of events is empty'), { items });
  const checked = list.map((item) => {
    // The path names the employee; items may leave employeeCode out.
    const withCode =
      isObject(item) && (item.employeeCode === undefined || item.employeeCode === null) ? { ...item, employeeCode: code } : item;
    return checkEvent(ctx, withCode);
  });
  return ctx.store.transaction(async (tx) => {
    await tx.lockEmployees([code]);
    if (!(await tx.employeeKnown(code)))
      return answer(fail('USER_NOT_AVAILABLE', `no user and no events with employeeCode "${code}"`), { items });
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
      const row = c.inTime !== null ? await tx.eventAt(code, c.inTime) : await tx.eventClosedAt(code, c.outTime!);
      if (!row || (c.outTime !== null && row.out_time !== c.outTime)) {
        results.push(fail('INVALID_PARAMETERS', 'matching event cannot be found'));
        continue;
      }
      await tx.deleteEvent(row.id);
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
  if (parseDateTime(from) === undefined)
    return answer(fail('INVALID_TIME_FORMAT', `from "${from ?? ''}" is not a date-time of the form ${DATE_TIME_PATTERN}`));
  if (parseDateTime(to) === undefined)
    return answer(fail('INVALID_TIME_FORMAT', `to "${to ?? ''}" is not a date-time of the form ${DATE_TIME_PATTERN}`));
  const limit = ctx.limits.maxEventsReturned;
  if (code && !(await ctx.store.employeeKnown(code)))
    return answer(fail('USER_NOT_AVAILABLE', `no user and no events with employeeCode "${code}"`));
  let rows = await ctx.store.events({ code: code || null, from: from!, to: to!, limit: limit + 1 });
  const truncated = rows.length > limit;
  if (truncated) rows = rows.slice(0, limit);
  const description = truncated
    ? `the first ${limit} events only: narrow the range to see the rest`
    : `${rows.length} ${plural(rows.length, 'event')}`;
  return answer(
    ok(
      rows.map((r) => ok(eventFromRow(ctx, r))),
      description,
    ),
    { items: rows.length },
  );
}
