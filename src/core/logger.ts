/**
 * Logger factory. One pino root, one child per module (`logger('drivers:r30x')`), each child's
 * level changeable at run time (`setLogLevel('drivers:*', 'debug')`). Biometric data and secrets
 * are redacted wherever they appear in a log object.
 *
 * Destination: stderr by default so that commands printing JSON keep stdout clean; the daemon
 * calls `configureLogging({destination: 'stdout'})` for journald. `format: 'pretty'` gives one
 * readable line a record for a technician at a terminal (log-format.ts). Times are local with
 * their offset in both formats.
 */
import { writeSync } from 'node:fs';
import pino, { type Logger, type LevelWithSilent } from 'pino';
import { localIsoTime, prettyLine } from './log-format.js';

export type LogLevel = LevelWithSilent;
export type { Logger };

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Keys whose values never reach a log line, at any depth up to two levels. */
export const REDACTED_KEYS = [
  'template',
  'templates',
  'image',
  'images',
  'minutiae',
  'irisCode',
  'code_bits',
  'mask',
  'password',
  'apiSecret',
  'secret',
  'secrets',
  'access_token',
  'accessToken',
  'token',
  'authorization',
  'Authorization',
  'templateKey',
  'siteKey',
  'key',
  'mqttPassword',
  'clientSecret',
  'opsKey',
  'opsKeys',
  'mac',
  'consolePassword',
  'cookie',
  'session',
];

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const k of REDACTED_KEYS) {
    paths.push(k, `*.${k}`, `*.*.${k}`);
  }
  paths.push('req.headers.authorization', 'headers.authorization');
  return paths;
}

export interface LoggingOptions {
  level?: LogLevel;
  destination?: 'stdout' | 'stderr';
  format?: 'json' | 'pretty';
}

interface State {
  root: Logger;
  options: Required<LoggingOptions>;
  children: Map<string, Logger>;
  /** Module patterns (exact name, `prefix:*` or `*`) with levels, most recent last. */
  overrides: Array<[string, LogLevel]>;
}

let state: State | undefined;
/** Set by `muteLogging`: every line goes nowhere, whatever the destination. */
let muted = false;
const nowhere = { write: (_line: string) => undefined };

function envLevel(): LogLevel | undefined {
  const v = process.env.EDGE_AGENT_LOG_LEVEL ?? process.env.LOG_LEVEL;
  return v && (LOG_LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : undefined;
}

function build(options: Required<LoggingOptions>): Logger {
  const fd = options.destination === 'stdout' ? 1 : 2;
  const base: pino.LoggerOptions = {
    level: 'trace', // children filter; the root lets everything through
    redact: { paths: redactPaths(), censor: '[redacted]' },
    base: { pid: process.pid },
    // Local time with its offset (2026-03-01T16:23:51.837+02:00): the zone punches are printed in.
    timestamp: () => `,"time":"${localIsoTime()}"`,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (muted) return pino(base, nowhere);
  if (options.format === 'pretty') {
    // One line a record (code first), a second for the hint: see log-format.ts. Written at once.
    return pino(base, {
      write: (line: string) => {
        let out = line;
        try {
          out = prettyLine(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not JSON: written as it is
        }
        writeSync(fd, out);
      },
    });
  }
  return pino(base, pino.destination({ fd, sync: true }));
}

function current(): State {
  if (!state) {
    const options: Required<LoggingOptions> = {
      level: envLevel() ?? 'info',
      destination: 'stderr',
      format: process.env.EDGE_AGENT_LOG_FORMAT === 'pretty' ? 'pretty' : 'json',
    };
    state = { root: build(options), options, children: new Map(), overrides: [] };
  }
  return state;
}

/** Replaces the root logger's destination, format and default level. Existing children follow. */
export function configureLogging(options: LoggingOptions): void {
  const prev = current();
  const next: Required<LoggingOptions> = {
    level: options.level ?? envLevel() ?? prev.options.level,
    destination: options.destination ?? prev.options.destination,
    format: options.format ?? prev.options.format,
  };
  const root = build(next);
  state = { root, options: next, children: new Map(), overrides: prev.overrides };
  // Rebind existing children in place so modules holding a reference keep working.
  for (const [name, child] of prev.children) {
    const fresh = root.child({ module: name });
    fresh.level = levelFor(name);
    Object.setPrototypeOf(child, fresh);
    (child as { level: string }).level = fresh.level;
    state.children.set(name, child);
  }
}

/**
 * Sends every log line of this process nowhere (`false` undoes it), whatever `configureLogging`
 * says later. Levels still apply, so what would be logged is still built and redacted. For a test
 * runner: the suite's setup mutes the test processes unless `EDGE_AGENT_TEST_LOGS=1`, so it
 * prints the reporter and nothing else.
 */
export function muteLogging(on = true): void {
  muted = on;
  configureLogging({});
}

function matches(pattern: string, name: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith(':*')) return name === pattern.slice(0, -2) || name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

function levelFor(name: string): LogLevel {
  const s = current();
  let level: LogLevel = s.options.level;
  for (const [pattern, l] of s.overrides) if (matches(pattern, name)) level = l;
  return level;
}

/** The logger of one module, for example `logger('upload:api')`. */
export function logger(module: string): Logger {
  const s = current();
  let child = s.children.get(module);
  if (!child) {
    child = s.root.child({ module });
    child.level = levelFor(module);
    s.children.set(module, child);
  }
  return child;
}

/**
 * Changes the level of every module matching `pattern` (`upload:api`, `drivers:*`, or `*`),
 * now and for modules created later. Returns the names of the modules changed.
 */
export function setLogLevel(pattern: string, level: LogLevel): string[] {
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new Error(`unknown log level "${level}"; use one of ${LOG_LEVELS.join(', ')}`);
  }
  const s = current();
  if (pattern === '*') {
    s.options.level = level;
    s.overrides = [];
  } else {
    s.overrides = s.overrides.filter(([p]) => p !== pattern);
    s.overrides.push([pattern, level]);
  }
  const changed: string[] = [];
  for (const [name, child] of s.children) {
    if (matches(pattern, name)) {
      child.level = levelFor(name);
      changed.push(name);
    }
  }
  return changed;
}

/** The current level of every module created so far. */
export function logLevels(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, child] of current().children) out[name] = child.level;
  return out;
}
