/**
 * Tolerant readers for what real attendance servers send: `shift` or `shiftName`, `status` as a
 * string or a bare number, numbers sent as numeric strings, and the report's alternative field
 * names (shiftWorkTime, workTime, inOutTime, productiveWorkTime, totalUnProductiveTime,
 * totalBreakHours, lastCheckin for the last check-out).
 */
import { tzOffsetFromWire, type TzOffsetUnit } from './date-time.js';
import type { AttendanceEvent, User, WorkHourRow } from './types.js';
import { WORK_HOUR_DURATIONS } from './types.js';

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** A finite number from a number or a numeric string; `undefined` otherwise. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** `status` of a user: `'0'` (Active), `'1'` (Disabled), from a string or a bare number. */
export function normalizeStatus(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = toNumber(v);
  return n === undefined ? String(v) : String(n);
}

/** The shift name of an event, from `shift` or `shiftName`; null when neither carries one. */
export function eventShift(raw: Raw): string | null {
  const s = raw.shift ?? raw.shiftName;
  return typeof s === 'string' && s !== '' ? s : null;
}

export function normalizeUser(raw: unknown): User {
  const r = isObject(raw) ? raw : {};
  const user: User = {
    employeeCode: str(r.employeeCode) ?? '',
    firstName: str(r.firstName) ?? '',
    lastName: str(r.lastName) ?? '',
  };
  const email = str(r.email);
  if (email !== undefined) user.email = email;
  const loginName = str(r.loginName);
  if (loginName !== undefined) user.loginName = loginName;
  const password = str(r.password);
  if (password !== undefined) user.password = password;
  const status = normalizeStatus(r.status);
  if (status !== undefined) user.status = status;
  const groupCode = str(r.groupCode);
  if (groupCode !== undefined) user.groupCode = groupCode;
  return user;
}

/** An event as read from the wire; `tzOffset` is converted from `unit` to minutes. */
export function normalizeEvent(raw: unknown, unit: TzOffsetUnit = 'minutes'): AttendanceEvent {
  const r = isObject(raw) ? raw : {};
  const ev: AttendanceEvent = { employeeCode: str(r.employeeCode) ?? '' };
  const inTime = str(r.inTime);
  const outTime = str(r.outTime);
  ev.inTime = inTime ?? null;
  ev.outTime = outTime ?? null;
  ev.shift = eventShift(r);
  const tz = toNumber(r.tzOffset);
  ev.tzOffset = tz === undefined ? 0 : tzOffsetFromWire(tz, unit);
  return ev;
}

const ALTERNATIVE_NAMES: Record<string, keyof WorkHourRow> = {
  shiftWorkTime: 'shiftWorkHours',
  workTime: 'workHours',
  inOutTime: 'inOuttime',
  productiveWorkTime: 'productiveWorkHours',
  totalUnProductiveTime: 'totalUnProductiveHours',
  totalBreakHours: 'actualBreakHours',
  lastCheckin: 'lastCheckout',
};

/** A report row with the alternative names mapped to 2.5's, durations as numbers (0 if absent). */
export function normalizeWorkHourRow(raw: unknown, unit: TzOffsetUnit = 'minutes'): WorkHourRow {
  const r: Raw = { ...(isObject(raw) ? raw : {}) };
  for (const [alt, name] of Object.entries(ALTERNATIVE_NAMES)) {
    if (r[name] === undefined && r[alt] !== undefined) r[name] = r[alt];
  }
  const row = {
    employeeCode: str(r.employeeCode) ?? '',
    firstName: str(r.firstName) ?? '',
    lastName: str(r.lastName) ?? '',
    firstCheckin: str(r.firstCheckin) ?? null,
    lastCheckout: str(r.lastCheckout) ?? null,
    tzOffset: tzOffsetFromWire(toNumber(r.tzOffset) ?? 0, unit),
  } as WorkHourRow;
  if (isObject(r.customdata)) row.customdata = r.customdata;
  for (const d of WORK_HOUR_DURATIONS) row[d] = toNumber(r[d]) ?? 0;
  return row;
}

/** True when `v` has the shape of an envelope (2.1): an object with a string `statusCode`. */
export function isEnvelope(v: unknown): v is { statusCode: string; statusDescription?: string; returnValue?: unknown } {
  return isObject(v) && typeof v.statusCode === 'string';
}
