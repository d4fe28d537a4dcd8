/**
 * What the commands share to find the terminal's setup: config from file/env/flags, secrets from
 * the 0600 file (default `<dataDir>/secrets.yaml`, or `$EDGE_AGENT_SECRETS`) and systemd
 * credentials.
 */
import { configFromFlags, loadConfig, secretsFilePath, type AgentConfig, type CommonFlagValues } from './config.js';
import { loadSecrets, type Secrets } from './secrets.js';

export type LoadedConfig = AgentConfig & { source: string | null };

export function configForFlags(values: CommonFlagValues, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return loadConfig({ file: values.config ?? null, env, overrides: configFromFlags(values) });
}

export function secretsFor(config: AgentConfig, values: CommonFlagValues, env: NodeJS.ProcessEnv = process.env): Secrets {
  return loadSecrets({
    // secretsFile from the config (provision writes it; $EDGE_AGENT_SECRETS overrides), else <dataDir>/secrets.yaml
    file: env.EDGE_AGENT_SECRETS ?? secretsFilePath(config),
    apiSecretFile: values['api-secret-file'] ?? null,
    apiKey: values['api-key'] ?? null,
  });
}
