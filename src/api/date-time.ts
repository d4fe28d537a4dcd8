/**
 * Date-times of the attendance API: strictly `yyyy-MM-dd HH:mm:ss` (the interface text's
 * `yyyy-MMdd` is a typo; its examples use the hyphenated form). They are local wall-clock times;
 * `tzOffset` says how far that local time is east of UTC, in minutes by default or in hours when
 * configured (`tzOffsetUnit`).
 */
import { AgentError } from '../core/errors.js';

export const DATE_TIME_PATTERN = 'yyyy-MM-dd HH:mm:ss';
const RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

export type TzOffsetUnit = 'minutes' | 'hours';
/** Largest offset accepted, in minutes (UTC+14:00 / UTC-12:00 with margin). */
export const MAX_TZ_OFFSET_MINUTES = 14 * 60;

/**
 * Milliseconds of the wall-clock reading, counted as if it were UTC (so that differences between
 * two readings of the same zone are exact), or `undefined` when the text is not a valid
 * `yyyy-MM-dd HH:mm:ss` (wrong pattern, month 13, February 30, hour 24, ...).
 */
export function parseDateTime(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RE.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms;
}

export function isDateTime(text: unknown): text is string {
  return parseDateTime(text) !== undefined;
}

/** Like `parseDateTime` but throws `API_INVALID_DATE_TIME` naming the field. */
export function requireDateTime(text: unknown, field = 'date-time'): number {
  const ms = parseDateTime(text);
  if (ms === undefined) {
    throw new AgentError(
      'API_INVALID_DATE_TIME',
      `${field} "${String(text)}" is not a date-time of the form ${DATE_TIME_PATTERN}`,
      { field, value: String(text) },
      { hint: `write it as ${DATE_TIME_PATTERN}, e.g. 2024-03-05 08:30:00` },
    );
  }
  return ms;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Formats wall-clock milliseconds (as from `parseDateTime`) as `yyyy-MM-dd HH:mm:ss`. */
export function formatDateTime(wallMs: number): string {
  const d = new Date(wallMs);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** The local wall-clock text of an instant for a zone `tzOffsetMinutes` east of UTC. */
export function formatLocal(instant: Date | number, tzOffsetMinutes = 0): string {
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  return formatDateTime(ms + tzOffsetMinutes * 60_000);
}

/** The UTC instant (ms) of a local wall-clock text at `tzOffsetMinutes` east of UTC. */
export function toUtcMs(text: string, tzOffsetMinutes = 0): number {
  return requireDateTime(text) - tzOffsetMinutes * 60_000;
}

/** Converts an offset in minutes to the wire unit. Hours may be fractional (India: 5.5). */
export function tzOffsetToWire(minutes: number, unit: TzOffsetUnit): number {
  return unit === 'hours' ? minutes / 60 : minutes;
}

/** Converts a wire offset to minutes (rounded to the whole minute). */
export function tzOffsetFromWire(value: number, unit: TzOffsetUnit): number {
  return Math.round(unit === 'hours' ? value * 60 : value);
}
