/**
 * The agent's configuration: one file (YAML or JSON), defaults for everything, `EDGE_AGENT_*`
 * environment overrides, then command-line flags. Validation errors name the key, the bad value
 * and the fix (`CONFIG_INVALID`). Secrets never live here: see `secrets.ts`.
 *
 * Precedence, lowest first: defaults < file < environment < flags.
 * Environment: `EDGE_AGENT_<PATH>` with `__` between levels, e.g. `EDGE_AGENT_TERMINAL__ID=gate-1`,
 * `EDGE_AGENT_API__URL=http://...`, `EDGE_AGENT_UPSTREAM=api,mqtt`; values are parsed as JSON
 * when they parse, else taken as strings.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { AgentError } from '../core/errors.js';

const level = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day as HH:MM');

export const ScannerConfigSchema = z.object({
  family: z.enum(['r30x', 'gt521', 'iris-hid']),
  /** Serial device path, HID path, or `sim` for a simulator. */
  path: z.string().min(1),
  baud: z.number().int().positive().optional(),
  /** R30x module address and password (defaults 0xFFFFFFFF and 0). */
  address: z.number().int().min(0).max(0xffffffff).optional(),
});

export const ConfigSchema = z.object({
  /** Incremented by `edge-agent provision` on each edit; reported in /info. */
  configVersion: z.number().int().min(0).default(0),
  terminal: z
    .object({
      id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash or underscore, at most 64').default('terminal-1'),
      site: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash or underscore, at most 64').default('site-1'),
      /** IANA time zone used for local punch times and tzOffset. */
      timeZone: z.string().min(1).default('UTC'),
      mode: z.enum(['in', 'out', 'toggle']).default('toggle'),
    })
    .default({} as never),
  /** Where the database and state live. */
  dataDir: z.string().min(1).default('./data'),
  api: z
    .object({
      /** Base URL of the attendance service; null means no API upstream. */
      url: z.string().url().nullable().default(null),
      pathForm: z.enum(['api', 'attendance']).default('api'),
      clientId: z.string().min(1).default('edge-agent'),
      tzOffsetUnit: z.enum(['minutes', 'hours']).default('minutes'),
      timeoutMs: z.number().int().positive().default(10_000),
    })
    .default({} as never),
  mqtt: z
    .object({
      url: z.string().regex(/^(mqtts?|wss?|tcp|ssl):\/\/.+/, 'an mqtt://, mqtts://, ws:// or wss:// URL').nullable().default(null),
      prefix: z.string().regex(/^[^#+/][^#+]*$/, 'a topic prefix without + or # and not starting with /').default('attendance'),
      username: z.string().nullable().default(null),
      tls: z
        .object({ ca: z.string().nullable().default(null), cert: z.string().nullable().default(null), key: z.string().nullable().default(null) })
        .default({} as never),
      keepaliveSec: z.number().int().positive().default(30),
    })
    .default({} as never),
  /** Where punches go; with both, an event is done when every sink has it. */
  upstream: z.array(z.enum(['api', 'mqtt'])).default(['api']),
  outbox: z
    .object({
      batchSize: z.number().int().min(1).max(1000).default(200),
      retentionDays: z.number().min(0).default(30),
      /** Pending punches above which new punches are refused (nothing recorded is ever dropped). */
      maxPending: z.number().int().positive().default(500_000),
      backoffBaseMs: z.number().int().positive().default(1000),
      backoffCapMs: z.number().int().positive().default(300_000),
      /** Punches taken before the clock synchronized are held this long for correction, then sent as they are. */
      unsyncedHoldHours: z.number().min(0).default(24),
    })
    .default({} as never),
  policy: z
    .object({
      dedupeWindowSec: z.number().min(0).default(60),
      /** Local time at which a new working day starts for toggle mode. */
      dayBoundary: hhmm.default('04:00'),
      /** An open check-in older than this is not closed by the next punch in toggle mode. */
      maxShiftHours: z.number().positive().default(16),
      shift: z.string().nullable().default(null),
    })
    .default({} as never),
  scanners: z.array(ScannerConfigSchema).default([]),
  /** Use simulated scanners (the embedded default). */
  simulate: z.boolean().default(false),
  biometrics: z
    .object({
      fingerThreshold: z.number().min(0).default(40),
      irisThreshold: z.number().min(0).max(1).default(0.32),
      irisShiftRange: z.number().int().min(0).max(32).default(8),
      embedding: z
        .object({
          model: z.string(),
          inputName: z.string().optional(),
          outputName: z.string().optional(),
          width: z.number().int().positive(),
          height: z.number().int().positive(),
          mean: z.number().default(0),
          std: z.number().positive().default(1),
          threshold: z.number().min(-1).max(1).default(0.6),
        })
        .nullable()
        .default(null),
    })
    .default({} as never),
  ops: z
    .object({
      enabled: z.boolean().default(true),
      metricsIntervalSec: z.number().positive().default(30),
    })
    .default({} as never),
  logging: z
    .object({
      level: level.default('info'),
      format: z.enum(['json', 'pretty']).default('json'),
      /** Per-module levels, e.g. {"drivers:*": "debug"}. */
      modules: z.record(z.string(), level).default({}),
    })
    .default({} as never),
});

export type AgentConfig = z.infer<typeof ConfigSchema>;
export type ScannerConfig = z.infer<typeof ScannerConfigSchema>;

export type DeepPartial<T> = T extends Array<infer _U> ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

/** Deep merge: objects merge, everything else (arrays included) replaces. */
export function mergeConfig(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? mergeConfig(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

function camel(s: string): string {
  return s.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `EDGE_AGENT_API__URL=x` → `{api: {url: 'x'}}`. Unknown keys are reported by validation. */
export function configFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const skip = new Set(['EDGE_AGENT_LOG_LEVEL', 'EDGE_AGENT_LOG_FORMAT', 'EDGE_AGENT_CONFIG', 'EDGE_AGENT_SECRETS']);
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('EDGE_AGENT_') || skip.has(name) || raw === undefined) continue;
    const path = name.slice('EDGE_AGENT_'.length).split('__').map(camel);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      value = path[path.length - 1] === 'upstream' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw;
    }
    if (path[path.length - 1] === 'upstream' && typeof value === 'string') value = value.split(',').map((s) => s.trim()).filter(Boolean);
    let node = out;
    for (const key of path.slice(0, -1)) node = (node[key] = isPlainObject(node[key]) ? node[key] : {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = value;
  }
  return out;
}

const FIXES: Record<string, string> = {
  'terminal.mode': 'use in, out or toggle',
  'api.pathForm': 'use api (/api/attendance/...) or attendance (/attendance/api/...)',
  'api.url': 'a full URL such as https://attendance.example.com',
  upstream: 'a list of api and/or mqtt, e.g. ["api", "mqtt"]',
  'scanners.family': 'use r30x, gt521 or iris-hid',
};

/** Validates a raw object and returns the config with every default filled in. */
export function parseConfig(raw: unknown, source = 'config'): AgentConfig {
  const result = ConfigSchema.strict().safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const key = issue.path.join('.');
    let value: unknown = raw;
    for (const p of issue.path) value = (value as Record<string | number, unknown> | undefined)?.[p as string];
    const genericKey = issue.path.filter((p) => typeof p === 'string').join('.');
    const fix = FIXES[key] ?? FIXES[genericKey] ?? issue.message;
    return { key: key || '(root)', value, message: issue.message, fix };
  });
  const first = issues[0]!;
  const lines = issues.map((i) => `${i.key}: ${JSON.stringify(i.value)} is not valid (${i.message}); ${i.fix}`);
  throw new AgentError('CONFIG_INVALID', `${source}: ${lines.join('; ')}`, { key: first.key, value: first.value, issues }, { hint: `fix ${first.key} in ${source}: ${first.fix}` });
}

/** Reads a YAML or JSON file (YAML is a superset of JSON). */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new AgentError('CONFIG_NOT_FOUND', `cannot read config file ${file}: ${e.code ?? e.message}`, { file }, { hint: 'pass the path of an existing file with --config, or run "edge-agent provision"', cause: err });
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text, { prettyErrors: true });
  } catch (err) {
    const e = err as { message: string; linePos?: Array<{ line: number; col: number }> };
    const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
    throw new AgentError('CONFIG_SYNTAX', `config file ${file} is not valid YAML or JSON${where}: ${e.message.split('\n')[0]}`, { file }, { hint: 'fix the syntax at the place named', cause: err });
  }
  if (doc === null || doc === undefined) return {};
  if (!isPlainObject(doc)) throw new AgentError('CONFIG_INVALID', `config file ${file} must hold a mapping of keys to values`, { file, key: '(root)' }, { hint: 'start the file with keys such as "terminal:" and "api:"' });
  return doc;
}

export interface LoadConfigOptions {
  file?: string | null;
  env?: NodeJS.ProcessEnv;
  /** Values from command-line flags (highest precedence). */
  overrides?: Record<string, unknown>;
}

/** Defaults < file < environment < overrides, validated. Relative dataDir resolves against the file's folder or cwd. */
export function loadConfig(options: LoadConfigOptions = {}): AgentConfig & { source: string | null } {
  const env = options.env ?? process.env;
  const file = options.file ?? env.EDGE_AGENT_CONFIG ?? null;
  let raw: Record<string, unknown> = file ? readConfigFile(file) : {};
  raw = mergeConfig(raw, configFromEnv(env));
  if (options.overrides) raw = mergeConfig(raw, options.overrides);
  const config = parseConfig(raw, file ?? 'configuration');
  config.dataDir = resolve(config.dataDir);
  return { ...config, source: file ? resolve(file) : null };
}

/** The flags shared by `run`, `punch` and `queue` (and named alike by `provision`). */
export const COMMON_FLAGS = {
  config: { type: 'string' },
  data: { type: 'string' },
  terminal: { type: 'string' },
  site: { type: 'string' },
  mode: { type: 'string' },
  api: { type: 'string' },
  'client-id': { type: 'string' },
  'api-key': { type: 'string' },
  'api-secret-file': { type: 'string' },
  'path-form': { type: 'string' },
  mqtt: { type: 'string' },
  upstream: { type: 'string' },
} as const;

export type CommonFlagValues = Partial<Record<keyof typeof COMMON_FLAGS, string>>;

/** Maps the common flags to config overrides (secrets flags are read by `loadSecrets`). */
export function configFromFlags(values: CommonFlagValues): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const set = (path: string[], v: unknown) => {
    let node = o;
    for (const k of path.slice(0, -1)) node = (node[k] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = v;
  };
  if (values.data) set(['dataDir'], values.data);
  if (values.terminal) set(['terminal', 'id'], values.terminal);
  if (values.site) set(['terminal', 'site'], values.site);
  if (values.mode) set(['terminal', 'mode'], values.mode);
  if (values.api) set(['api', 'url'], values.api);
  if (values['client-id']) set(['api', 'clientId'], values['client-id']);
  if (values['path-form']) set(['api', 'pathForm'], values['path-form']);
  if (values.mqtt) set(['mqtt', 'url'], values.mqtt);
  if (values.upstream) set(['upstream'], values.upstream.split(',').map((s) => s.trim()).filter(Boolean));
  else if (values.api && values.mqtt) set(['upstream'], ['api', 'mqtt']);
  else if (values.mqtt && !values.api) set(['upstream'], ['mqtt']);
  return o;
}
