/**
 * Operation 9: the work-hour report. One row per employee and period (DAILY: a day; WEEKLY: an
 * ISO week, Monday to Sunday; MONTHLY: a calendar month) that has at least one check-in between
 * `from` and `to` (inclusive, on the check-in's local time). The sessions of one day and one shift
 * are computed against that shift (work-hours.ts; an event whose shift is no longer configured
 * counts under the default shift); a period's row sums its day-shifts.
 * `groupcodes` keeps employees whose groupCode (our extension of the user) is listed; `shiftname`
 * keeps only events of that shift. Rows are ordered by period, then employeeCode, and paged:
 * `pagenumber` from 1 (default 1), `pagesize` 1..maxPageSize (default defaultPageSize). Paging
 * metadata travels in headers (X-Total-Count, X-Page-Number, X-Page-Size, X-Page-Count) and in
 * the statusDescription.
 */
import { DATE_TIME_PATTERN, formatDateTime, parseDateTime, tzOffsetToWire } from '../api/date-time.js';
import { GROUP_TYPES, WORK_HOUR_DURATIONS, type GroupType, type WorkHourRow } from '../api/types.js';
import { answer, fail, ok, plural, type HandlerResult } from './envelope.js';
import type { ServiceContext } from './context.js';
import type { ReportRow as Row } from './store/store.js';
import { computeDay, type Durations, type Session } from './work-hours.js';

const DAY = 86_400_000;

/** Wall-clock ms of 00:00 of the first day of the period containing `dayMs`. */
export function periodStart(dayMs: number, type: GroupType): number {
  const d = new Date(dayMs);
  if (type === 'WEEKLY') return dayMs - ((d.getUTCDay() + 6) % 7) * DAY;
  if (type === 'MONTHLY') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return dayMs;
}

export function periodEnd(startMs: number, type: GroupType): number {
  const d = new Date(startMs);
  if (type === 'WEEKLY') return startMs + 6 * DAY;
  if (type === 'MONTHLY') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - DAY;
  return startMs;
}

const dateOnly = (ms: number) => formatDateTime(ms).slice(0, 10);

function intParam(query: URLSearchParams, name: string, fallback: number): number | string {
  const v = query.get(name);
  if (v === null || v === '') return fallback;
  if (!/^\d+$/.test(v)) return `${name} must be a whole number, got "${v}"`;
  return Number(v);
}

export async function workHourReport(ctx: ServiceContext, query: URLSearchParams): Promise<HandlerResult> {
  const bad = (text: string) => answer(fail('INVALID_PARAMETERS', text));
  const from = query.get('from');
  const to = query.get('to');
  const fromMs = parseDateTime(from);
  const toMs = parseDateTime(to);
  if (fromMs === undefined) return bad(`from "${from ?? ''}" is not a date-time of the form ${DATE_TIME_PATTERN}`);
  if (toMs === undefined) return bad(`to "${to ?? ''}" is not a date-time of the form ${DATE_TIME_PATTERN}`);
  if (toMs < fromMs) return bad('to is before from');
  const groupType = (query.get('grouptype') || 'DAILY').toUpperCase();
  if (!(GROUP_TYPES as readonly string[]).includes(groupType))
    return bad(`grouptype "${query.get('grouptype')}" is not DAILY, WEEKLY or MONTHLY`);
  const shiftName = query.get('shiftname') || null;
  if (shiftName !== null && !ctx.shifts.byName.has(shiftName))
    return bad(`unknown shiftname "${shiftName}"; the service knows ${[...ctx.shifts.byName.keys()].join(', ')}`);
  const groupCodes = (query.get('groupcodes') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const page = intParam(query, 'pagenumber', 1);
  const size = intParam(query, 'pagesize', ctx.limits.defaultPageSize);
  if (typeof page === 'string') return bad(page);
  if (typeof size === 'string') return bad(size);
  if (page < 1) return bad('pagenumber starts at 1');
  if (size < 1 || size > ctx.limits.maxPageSize) return bad(`pagesize must be between 1 and ${ctx.limits.maxPageSize}`);

  const rows = await ctx.store.reportRows(from!, to!);
  const groups = new Set(groupCodes);
  // employee → (day, shift) → the events of that shift on that day
  const days = new Map<string, { user: Row; byDay: Map<string, { dayMs: number; shift: string; evs: Row[] }> }>();
  for (const r of rows) {
    if (groups.size && !(r.group_code !== null && groups.has(r.group_code))) continue;
    if (shiftName !== null && r.shift !== shiftName) continue;
    const inMs = parseDateTime(r.in_time)!;
    const dayMs = inMs - (inMs % DAY);
    let emp = days.get(r.employee_code);
    if (!emp) {
      emp = { user: r, byDay: new Map() };
      days.set(r.employee_code, emp);
    }
    const shift = ctx.shifts.byName.has(r.shift) ? r.shift : ctx.shifts.defaultShift;
    const key = `${dayMs}|${shift}`;
    const slot = emp.byDay.get(key);
    if (slot) slot.evs.push(r);
    else emp.byDay.set(key, { dayMs, shift, evs: [r] });
  }

  const type = groupType as GroupType;
  const out: Array<WorkHourRow & { _period: number }> = [];
  for (const [code, emp] of days) {
    const periods = new Map<
      number,
      WorkHourRow & { _period: number; _first: number; _last: number | null; _shifts: Set<string>; _days: Set<number> }
    >();
    const slots = [...emp.byDay.values()].sort(
      (a, b) => a.dayMs - b.dayMs || parseDateTime(a.evs[0]!.in_time)! - parseDateTime(b.evs[0]!.in_time)!,
    );
    for (const { dayMs, shift: slotShift, evs } of slots) {
      const shift = ctx.shifts.byName.get(slotShift)!;
      const sessions: Session[] = evs.map((e) => ({
        inMs: parseDateTime(e.in_time)!,
        outMs: e.out_time === null ? null : (parseDateTime(e.out_time) ?? null),
      }));
      const d = computeDay(shift, dayMs, sessions);
      const p = periodStart(dayMs, type);
      let row = periods.get(p);
      if (!row) {
        const base = {
          employeeCode: code,
          firstName: emp.user.first_name,
          lastName: emp.user.last_name,
          firstCheckin: null,
          lastCheckout: null,
          tzOffset: tzOffsetToWire(evs[0]!.tz_offset, ctx.tzOffsetUnit),
          _period: p,
          _first: d.firstCheckinMs,
          _last: null,
          _shifts: new Set<string>(),
          _days: new Set<number>(),
        } as unknown as WorkHourRow & { _period: number; _first: number; _last: number | null; _shifts: Set<string>; _days: Set<number> };
        for (const k of WORK_HOUR_DURATIONS) base[k] = 0;
        row = base;
        periods.set(p, row);
      }
      for (const k of WORK_HOUR_DURATIONS) row[k] += (d as Durations)[k];
      row._first = Math.min(row._first, d.firstCheckinMs);
      if (d.lastCheckoutMs !== null) row._last = row._last === null ? d.lastCheckoutMs : Math.max(row._last, d.lastCheckoutMs);
      row._shifts.add(shift.name);
      row._days.add(dayMs);
    }
    for (const row of periods.values()) {
      const ordered = {
        employeeCode: row.employeeCode,
        firstName: row.firstName,
        lastName: row.lastName,
        customdata: {
          groupCode: emp.user.group_code,
          groupType: type,
          periodStart: dateOnly(row._period),
          periodEnd: dateOnly(periodEnd(row._period, type)),
          shifts: [...row._shifts],
          days: row._days.size,
        },
      } as unknown as WorkHourRow & { _period: number };
      for (const k of WORK_HOUR_DURATIONS) ordered[k] = row[k];
      ordered.firstCheckin = formatDateTime(row._first);
      ordered.lastCheckout = row._last === null ? null : formatDateTime(row._last);
      ordered.tzOffset = row.tzOffset;
      ordered._period = row._period;
      out.push(ordered);
    }
  }
  out.sort((a, b) => a._period - b._period || (a.employeeCode < b.employeeCode ? -1 : a.employeeCode > b.employeeCode ? 1 : 0));
  const total = out.length;
  const pageCount = Math.max(1, Math.ceil(total / size));
  const pageRows = out.slice((page - 1) * size, page * size).map(({ _period, ...r }) => r);
  return answer(ok(pageRows, `page ${page} of ${pageCount}, ${total} ${plural(total, 'row')} in all`), {
    headers: {
      'x-total-count': String(total),
      'x-page-number': String(page),
      'x-page-size': String(size),
      'x-page-count': String(pageCount),
    },
    items: pageRows.length,
  });
}
