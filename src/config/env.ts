/**
 * The environment layer of the configuration: `EDGE_AGENT_<PATH>` with `__` between levels, e.g.
 * `EDGE_AGENT_TERMINAL__ID=gate-1`, `EDGE_AGENT_API__URL=http://...`, `EDGE_AGENT_UPSTREAM=api,mqtt`;
 * values are parsed as JSON when they parse, else taken as strings (a string key keeps its text).
 */
import { ConfigSchema } from './config.js';
import { setPath } from './layers.js';
import { type AnySchema, schemaAt } from './schema-path.js';

function camel(s: string): string {
  return s.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Short names kept for convenience (and read by the logger before any config is loaded). */
const ALIASES: Record<string, string[]> = {
  EDGE_AGENT_LOG_LEVEL: ['logging', 'level'],
  EDGE_AGENT_LOG_FORMAT: ['logging', 'format'],
  EDGE_AGENT_SECRETS: ['secretsFile'],
};

/**
 * `EDGE_AGENT_API__URL=x` → `{api: {url: 'x'}}`. Unknown keys are reported by validation.
 * `EDGE_AGENT_TEST_*` belongs to the tests (seams, hidden programs), never to the configuration.
 */
export function configFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (
      !name.startsWith('EDGE_AGENT_') ||
      name.startsWith('EDGE_AGENT_TEST_') ||
      name === 'EDGE_AGENT_CONFIG' ||
      raw === undefined ||
      raw === ''
    )
      continue;
    const path = ALIASES[name] ?? name.slice('EDGE_AGENT_'.length).split('__').map(camel);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    // A string key keeps its text even when it parses as JSON (EDGE_AGENT_TERMINAL__ID=123).
    const target = schemaAt(path, ConfigSchema as unknown as AnySchema);
    if (target?._zod.def.type === 'string' && typeof value !== 'string' && value !== null) value = raw;
    if (path[path.length - 1] === 'upstream' && typeof value === 'string')
      value = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    setPath(out, path, value);
  }
  return out;
}

/** The environment variable that sets a dotted key: `api.pathForm` → `EDGE_AGENT_API__PATH_FORM`. */
export function envName(dotted: string): string {
  return `EDGE_AGENT_${dotted
    .split('.')
    .map((p) => p.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())
    .join('__')}`;
}
