/**
 * How a log line looks. JSON (journald, the default) keeps every field; `pretty` is for a person at
 * a terminal: one line with the time and its zone, the level, the error code first, the
 * message, then the module and the other fields as key=value, and a second line with the hint when the error
 * has one. No stack traces in pretty lines (the JSON form keeps them).
 *
 *   16:23:51.837+02:00 ERROR API_TIMEOUT: delivery to api failed: no answer in 10000 ms  [upload:api] sink=api batch=3
 *     hint: the service or the network is slow or down (api.timeoutMs sets the limit)
 */

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `+02:00`, `-05:30`, `+00:00`: the zone of `ms` on this machine. */
function zoneOf(date: Date): string {
  const off = -date.getTimezoneOffset();
  return `${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

/** Local ISO 8601 with the offset: `2026-03-01T16:23:51.837+02:00`, the zone punches print in. */
export function localIsoTime(ms: number = Date.now()): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}${zoneOf(d)}`;
}

const LEVELS: Record<string, string> = { '10': 'TRACE', '20': 'DEBUG', '30': 'INFO', '40': 'WARN', '50': 'ERROR', '60': 'FATAL' };
const SKIP = new Set(['time', 'level', 'msg', 'module', 'pid', 'hostname', 'err', 'code']);

function text(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v) ?? String(v);
}

/** One pino JSON object as one (or, with a hint, two) readable lines, newline included. */
export function prettyLine(o: Record<string, unknown>): string {
  const time =
    typeof o.time === 'string' ? o.time.replace(/^\d{4}-\d\d-\d\dT/, '') : typeof o.time === 'number' ? localIsoTime(o.time).slice(11) : '';
  const level = typeof o.level === 'string' ? o.level.toUpperCase() : (LEVELS[String(o.level)] ?? String(o.level));
  const err = o.err as { code?: unknown; message?: unknown; hint?: unknown } | string | undefined;
  const code = typeof err === 'object' && err && typeof err.code === 'string' ? err.code : typeof o.code === 'string' ? o.code : null;
  const detail = typeof err === 'string' ? err : typeof err === 'object' && err && typeof err.message === 'string' ? err.message : null;
  const hint = typeof err === 'object' && err && typeof err.hint === 'string' ? err.hint : null;
  const msg = typeof o.msg === 'string' ? o.msg : '';
  const head = `${code ? `${code}: ` : ''}${msg}${detail && detail !== msg ? `${msg ? ': ' : ''}${detail}` : ''}`;
  const fields = Object.entries(o)
    .filter(([k, v]) => !SKIP.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${text(v)}`);
  const where = typeof o.module === 'string' ? `[${o.module}]` : '';
  const tail = [where, ...fields].filter(Boolean).join(' ');
  const line = `${time} ${level.padEnd(5)} ${head}${tail ? `  ${tail}` : ''}`;
  return `${line}\n${hint ? `  hint: ${hint}\n` : ''}`;
}
