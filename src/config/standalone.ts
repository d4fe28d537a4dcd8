/**
 * The configuration of a command that runs away from any terminal: `console`, `fleet`, `ops send`,
 * `ingest` and `users` on an operator's workstation or a central server, where there is no
 * /etc/edge-agent/config.yaml. Such a command runs from its flags alone; a config file only fills
 * in what the flags leave out:
 *
 *   - `--config FILE` or `$EDGE_AGENT_CONFIG`: that file, always;
 *   - else /etc/edge-agent/config.yaml when it exists (the command runs on a terminal);
 *   - else, when the flags leave something out and this copy is a checkout, the embedded demo's
 *     config, said on stderr; when the flags are complete the demo's is never read;
 *   - else nothing: defaults and flags, and the command names the flag it misses.
 *
 * Secrets come from `--secrets FILE` (or `--data DIR`'s secrets.yaml, or the config's) and from
 * systemd credentials, never from a `data/secrets.yaml` of whatever folder the command runs in.
 */
import { loadConfig, type LoadedConfig } from './load.js';
import { type CommonFlagValues, configFromFlags } from './flags.js';
import { type ConfigLocation, locateConfig } from './locate.js';
import { loadSecrets, type Secrets, secretsFilePath } from './secrets.js';

export interface StandaloneOptions {
  /** True when the flags give everything the command needs: the demo's config is then never read. */
  complete: boolean;
  /** Where the demo note goes (default stderr). */
  say?: (line: string) => void;
}

export type StandaloneConfig = LoadedConfig & {
  /** The secrets file the command reads, or null when none was named (no config, no --secrets, no --data). */
  secretsPath: string | null;
};

export function standaloneConfig(
  values: CommonFlagValues,
  env: NodeJS.ProcessEnv = process.env,
  options: StandaloneOptions,
): StandaloneConfig {
  let location: ConfigLocation = locateConfig(values.config, env);
  if (location.origin === 'demo' && options.complete) {
    location = {
      file: null,
      origin: null,
      looked: [...location.looked.slice(0, -1), "not the embedded demo's: the flags give what the command needs"],
      note: null,
    };
  }
  if (location.note) (options.say ?? ((line: string) => process.stderr.write(`${line}\n`)))(location.note);
  const config = loadConfig({ file: location.file, env, overrides: configFromFlags(values) });
  const named = location.file !== null || values.secrets !== undefined || values.data !== undefined;
  const secretsPath = env.EDGE_AGENT_SECRETS ?? (named ? secretsFilePath(config) : null);
  return { ...config, location, secretsPath };
}

/** The secrets of a standalone command: its secrets file (if any), systemd credentials, --api-key and --api-secret-file. */
export function standaloneSecrets(config: StandaloneConfig, values: CommonFlagValues = {}): Secrets {
  return loadSecrets({
    file: config.secretsPath,
    apiSecretFile: values['api-secret-file'] ?? null,
    apiKey: values['api-key'] ?? null,
  });
}

/** Where a standalone command looked for a configuration, for an error that names a missing flag. */
export function lookedAt(config: StandaloneConfig): string {
  return config.location.file
    ? `the config ${config.location.file} has none`
    : `no configuration found (looked at: ${config.location.looked.join(', ')})`;
}
