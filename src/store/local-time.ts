/**
 * Local wall-clock times of punches. The text form and its arithmetic are the API contract's
 * (`src/api/date-time.ts`: `yyyy-MM-dd HH:mm:ss`, offsets in minutes east of UTC); this file adds
 * what a terminal needs beside them: the offset of an IANA zone at an instant.
 *
 * Tested in test/unit/terminal/punch-policy.test.ts (the terminal's time zone and an explicit
 * tzOffset stamped on a punch) and test/unit/store/outbox/recording.test.ts.
 */
import { AgentError } from '../core/errors.js';
import { formatLocal, toUtcMs } from '../api/date-time.js';

export { formatLocal };

export const LOCAL_TIME_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** Parses `yyyy-MM-dd HH:mm:ss` as a local time at `tzOffsetMin`; returns the UTC instant in ms. */
export function parseLocal(local: string, tzOffsetMin: number): number {
  try {
    return toUtcMs(local, tzOffsetMin);
  } catch (err) {
    throw new AgentError(
      'STORE_BAD_TIME',
      `"${local}" is not a local time of the form yyyy-MM-dd HH:mm:ss`,
      { value: local },
      { hint: 'write the time as 2026-03-01 07:58:00', cause: err },
    );
  }
}

/** Minutes east of UTC of the IANA zone `timeZone` at the instant `utcMs`. */
export function zoneOffsetMinutes(timeZone: string, utcMs: number): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    }).formatToParts(new Date(utcMs));
  } catch (err) {
    throw new AgentError(
      'CONFIG_BAD_TIMEZONE',
      `unknown time zone "${timeZone}"`,
      { timeZone },
      { hint: 'set terminal.timeZone to an IANA name such as Europe/Berlin or UTC', cause: err },
    );
  }
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour') % 24, get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(utcMs / 1000) * 1000) / 60_000);
}
