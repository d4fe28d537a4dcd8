/**
 * Explains a config that does not validate: each zod issue becomes one that names the key, the
 * bad value, the kind of mistake (its own error code) and the fix, with a did-you-mean for an
 * unknown key. `configError` turns them into the one `AgentError` a command shows.
 */
import type { z } from 'zod';
import { AgentError } from '../core/errors.js';
import { type AnySchema, knownKeys } from './schema-path.js';

/** The fix for a bad value, by dotted key, or with the list indexes left out (`scanners.family`). */
const FIXES: Record<string, string> = {
  'terminal.id': 'letters, digits, dot, dash or underscore, at most 64, e.g. gate-1',
  'terminal.site': 'letters, digits, dot, dash or underscore, at most 64, e.g. plant-north',
  'terminal.timeZone': 'an IANA time zone such as Europe/Berlin or UTC',
  'terminal.mode': 'use in, out or toggle',
  'api.pathForm': 'use api (/api/attendance/...) or attendance (/attendance/api/...)',
  'api.url': 'a full http:// or https:// URL such as https://attendance.example.com, or null for no API',
  'mqtt.url': 'a full mqtt://, mqtts://, ws:// or wss:// URL such as mqtts://broker.example.com:8883, or null for no MQTT',
  upstream: 'a list of api and/or mqtt, e.g. ["api", "mqtt"]',
  'scanners.family': 'use r30x, gt521, iris-hid, badge-serial or badge-hid',
  'scanners.path': 'a device path such as /dev/fingerprint0, /dev/ttyUSB0, /dev/hidraw0 or sim',
  'scanners.format':
    "the badge reader's line format: em4100-dec, em4100-hex (serial only), wiegand26 or wiegand34; only for badge-serial and badge-hid",
  'policy.require': 'use either (finger, eye or badge), biometric, badge, or both (a badge, then a finger or eye)',
  'policy.secondFinger': 'use on (ask for another finger when two people are close) or off (reject at once)',
  'policy.secondFingerTimeoutSec': 'seconds to place the second finger, more than 0 and at most 60, e.g. 10',
  'clock.sources': 'a list of timedatectl, timesyncd and/or chrony (first that can tell decides), or [] for the year alone',
  'clock.earlierBootPunches': 'use hold (until "edge-agent queue release-unsynced") or send (as they are, marked)',
  'console.host': 'an address to listen on: 127.0.0.1 (default), ::1, or 0.0.0.0 with a console login',
  'console.homeAssistant.sites': 'a list of site ids, or ["*"] for every site',
  'logging.level': 'use fatal, error, warn, info, debug, trace or silent',
  'logging.format': 'use json (journald) or pretty (a technician at a terminal)',
  'logging.modules': 'a map of module pattern to level, e.g. {"drivers:*": "debug"}',
};

/** Keys whose bad values are reported as `CONFIG_BAD_URL`. */
const URL_KEYS = new Set(['api.url', 'mqtt.url']);

/** The kinds of mistakes a config can hold, each with its own error code. */
export const CONFIG_ERROR_CODES = {
  unknownKey: 'CONFIG_UNKNOWN_KEY',
  wrongType: 'CONFIG_WRONG_TYPE',
  badEnum: 'CONFIG_BAD_ENUM',
  badUrl: 'CONFIG_BAD_URL',
  badValue: 'CONFIG_INVALID',
  syntax: 'CONFIG_SYNTAX',
  notFound: 'CONFIG_NOT_FOUND',
} as const;

export interface ConfigIssue {
  code: (typeof CONFIG_ERROR_CODES)[keyof typeof CONFIG_ERROR_CODES];
  /** Dotted path, e.g. `api.url` or `scanners.0.family`. */
  key: string;
  value: unknown;
  message: string;
  fix: string;
  /** Where the bad value came from: the file, an environment variable, or a flag. */
  origin?: string;
}

function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[y.length]!;
}

/** The closest known key, when it is close enough to be a typo. */
export function didYouMean(key: string, candidates: string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d =
      c.toLowerCase() === key.toLowerCase() || c.toLowerCase().replace(/[-_]/g, '') === key.toLowerCase().replace(/[-_]/g, '')
        ? 0
        : editDistance(key, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== null && bestD <= Math.max(2, Math.floor(key.length / 3)) ? best : null;
}

function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = raw;
  for (const p of path) v = (v as Record<PropertyKey, unknown> | undefined)?.[p];
  return v;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'missing';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** A value's kind as a message names it: `a list`, `a mapping`, `a string`, `null`. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `a ${typeof v}`;
}

/** Turns zod issues against `schema` into issues that name the key, the value, the kind of mistake and the fix. */
export function explainIssues(raw: unknown, zodIssues: ReadonlyArray<z.core.$ZodIssue>, schema: AnySchema): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of zodIssues) {
    const path = issue.path as Array<string | number>;
    const dotted = path.join('.');
    const generic = path.filter((p) => typeof p === 'string').join('.');
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeys(path, schema);
      for (const k of issue.keys) {
        const key = dotted ? `${dotted}.${k}` : k;
        const guess = didYouMean(k, known);
        out.push({
          code: CONFIG_ERROR_CODES.unknownKey,
          key,
          value: valueAt(raw, [...path, k]),
          message: `unknown key "${key}"`,
          fix: guess ? `did you mean "${dotted ? `${dotted}.` : ''}${guess}"?` : `remove it; known keys here: ${known.join(', ')}`,
        });
      }
      continue;
    }
    const value = valueAt(raw, path);
    const fix = FIXES[dotted] ?? FIXES[generic];
    if (issue.code === 'invalid_type') {
      const expected = String(issue.expected);
      out.push({
        code: CONFIG_ERROR_CODES.wrongType,
        key: dotted || '(root)',
        value,
        message:
          value === undefined
            ? `${dotted} is required`
            : `${dotted} must be ${expected === 'object' ? 'a mapping' : expected === 'array' ? 'a list' : `a ${expected}`}, not ${typeName(value)}`,
        fix: fix ?? `write ${dotted} as a ${expected}`,
      });
    } else if (issue.code === 'invalid_value') {
      const allowed = issue.values.map((v) => JSON.stringify(v)).join(', ');
      out.push({
        code: CONFIG_ERROR_CODES.badEnum,
        key: dotted,
        value,
        message: `${dotted} must be one of ${allowed}`,
        fix: fix ?? `use one of ${allowed}`,
      });
    } else if (URL_KEYS.has(generic) || (issue.code === 'invalid_format' && issue.format === 'url')) {
      out.push({
        code: CONFIG_ERROR_CODES.badUrl,
        key: dotted,
        value,
        message: `${dotted} is not a valid URL`,
        fix: fix ?? 'write a full URL such as https://host:port',
      });
    } else {
      out.push({
        code: CONFIG_ERROR_CODES.badValue,
        key: dotted || '(root)',
        value,
        message: `${dotted} ${issue.message.replace(/^Invalid input: /, '')}`,
        fix: fix ?? issue.message,
      });
    }
  }
  return out;
}

/** The error for a list of issues: the first one's code, key and fix; every issue listed in the message. */
export function configError(issues: ConfigIssue[], source: string): AgentError {
  const first = issues[0]!;
  const lines = issues.map(
    (i) => `${i.key}: ${describeValue(i.value)} is not valid (${i.message}${i.origin ? `, from ${i.origin}` : ''}); fix: ${i.fix}`,
  );
  return new AgentError(
    first.code,
    `${source}: ${lines.join('; ')}`,
    { key: first.key, value: first.value, origin: first.origin, issues },
    { hint: `fix ${first.key}${first.origin ? ` (${first.origin})` : ` in ${source}`}: ${first.fix}` },
  );
}
