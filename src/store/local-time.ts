/**
 * Local wall-clock strings as the attendance API wants them (`yyyy-MM-dd HH:mm:ss`) and the
 * offsets that go with them (minutes east of UTC). A punch keeps the local time it was taken at
 * and its offset, so the UTC instant is always `local − offset`.
 */
import { AgentError } from '../core/errors.js';

export const LOCAL_TIME_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The local time string of the UTC instant `utcMs` at `tzOffsetMin` minutes east of UTC. */
export function formatLocal(utcMs: number, tzOffsetMin: number): string {
  const d = new Date(utcMs + tzOffsetMin * 60_000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** Parses `yyyy-MM-dd HH:mm:ss` as a local time at `tzOffsetMin`; returns the UTC instant in ms. */
export function parseLocal(local: string, tzOffsetMin: number): number {
  const m = LOCAL_TIME_RE.exec(local);
  const bad = () => new AgentError('STORE_BAD_TIME', `"${local}" is not a local time of the form yyyy-MM-dd HH:mm:ss`, { value: local }, { hint: 'write the time as 2026-03-01 07:58:00' });
  if (!m) throw bad();
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw bad();
  return ms - tzOffsetMin * 60_000;
}

/** Minutes east of UTC of the IANA zone `timeZone` at the instant `utcMs`. */
export function zoneOffsetMinutes(timeZone: string, utcMs: number): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(new Date(utcMs));
  } catch (err) {
    throw new AgentError('CONFIG_BAD_TIMEZONE', `unknown time zone "${timeZone}"`, { timeZone }, { hint: 'set terminal.timeZone to an IANA name such as Europe/Berlin or UTC', cause: err });
  }
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour') % 24, get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(utcMs / 1000) * 1000) / 60_000);
}
