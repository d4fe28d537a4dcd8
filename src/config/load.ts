/**
 * What the commands share to find the terminal's setup: the config by the one rule of
 * `locate.ts` (--config, $EDGE_AGENT_CONFIG, /etc/edge-agent/config.yaml, the demo's in a
 * checkout) with env and flags on top, secrets from the 0600 file (default
 * `<dataDir>/secrets.yaml`, or `$EDGE_AGENT_SECRETS`) and systemd credentials.
 */
import { configFromFlags, loadConfig, secretsFilePath, type AgentConfig, type CommonFlagValues } from './config.js';
import { locateConfig, noConfigError, type ConfigLocation } from './locate.js';
import { loadSecrets, type Secrets } from './secrets.js';

export type LoadedConfig = AgentConfig & { source: string | null; location: ConfigLocation };

export interface ConfigForFlagsOptions {
  /**
   * Refuse (`CONFIG_NONE`, naming where it looked) when no config file is found: every command
   * that records or reads punches or templates. Default true.
   */
  require?: boolean;
  /** The command, for the refusal: `edge-agent punch`. */
  command?: string;
  /** Where the demo note goes (default stderr); commands print it so a person sees which config runs. */
  say?: (line: string) => void;
}

export function configForFlags(
  values: CommonFlagValues,
  env: NodeJS.ProcessEnv = process.env,
  options: ConfigForFlagsOptions = {},
): LoadedConfig {
  const location = locateConfig(values.config, env);
  if (!location.file && options.require !== false) throw noConfigError(location, options.command);
  if (location.note) (options.say ?? ((line: string) => process.stderr.write(`${line}\n`)))(location.note);
  return { ...loadConfig({ file: location.file, env, overrides: configFromFlags(values) }), location };
}

export function secretsFor(config: AgentConfig, values: CommonFlagValues, env: NodeJS.ProcessEnv = process.env): Secrets {
  return loadSecrets({
    // secretsFile from the config (provision writes it; $EDGE_AGENT_SECRETS overrides), else <dataDir>/secrets.yaml
    file: env.EDGE_AGENT_SECRETS ?? secretsFilePath(config),
    apiSecretFile: values['api-secret-file'] ?? null,
    apiKey: values['api-key'] ?? null,
  });
}
