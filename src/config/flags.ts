/** The command-line layer of the configuration: the common flags, mapped to the keys they override (the highest precedence). */
import { setPath } from './layers.js';

/** The flags shared by `run`, `punch` and `queue` (and named alike by `provision`). `--secrets` names the secrets file. */
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
  secrets: { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
} as const;

export type CommonFlagValues = Partial<Record<keyof typeof COMMON_FLAGS, string>>;

/** Maps the common flags to config overrides (secrets flags are read by `loadSecrets`). */
export function configFromFlags(values: CommonFlagValues): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const set = (path: string[], v: unknown) => setPath(o, path, v);
  if (values.data) set(['dataDir'], values.data);
  if (values.terminal) set(['terminal', 'id'], values.terminal);
  if (values.site) set(['terminal', 'site'], values.site);
  if (values.mode) set(['terminal', 'mode'], values.mode);
  if (values.api) set(['api', 'url'], values.api);
  if (values['client-id']) set(['api', 'clientId'], values['client-id']);
  if (values['path-form']) set(['api', 'pathForm'], values['path-form']);
  if (values.mqtt) set(['mqtt', 'url'], values.mqtt);
  if (values.secrets) set(['secretsFile'], values.secrets);
  if (values['log-level']) set(['logging', 'level'], values['log-level']);
  if (values['log-format']) set(['logging', 'format'], values['log-format']);
  // --mqtt alone means monitoring (state, metrics, commands, site sync); punches go to the broker
  // only when asked for: --upstream mqtt (or api,mqtt), or `upstream` in the config.
  if (values.upstream)
    set(
      ['upstream'],
      values.upstream
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  return o;
}
