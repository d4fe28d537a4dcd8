/**
 * What `run`, `punch` and `queue` share: config from file/env/flags, secrets from the 0600 file
 * (default `<dataDir>/secrets.yaml`, or `$EDGE_AGENT_SECRETS`) and systemd credentials, and the
 * outbox on the terminal's database.
 */
import type { SqliteDatabase } from '../core/sqlite.js';
import { openAgentDatabase } from '../store/agent-db.js';
import { Outbox } from '../store/outbox.js';
import { configFromFlags, loadConfig, secretsFilePath, type AgentConfig, type CommonFlagValues } from '../config/config.js';
import { loadSecrets, type Secrets } from '../config/secrets.js';

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

/** Opens `<dataDir>/agent.db` and the outbox on it with the config's sinks and limits. */
export async function openOutbox(config: AgentConfig): Promise<{ db: SqliteDatabase; outbox: Outbox }> {
  const db = await openAgentDatabase(config.dataDir);
  try {
    const outbox = await Outbox.open(db, { sinks: config.upstream, maxPending: config.outbox.maxPending, unsyncedHoldHours: config.outbox.unsyncedHoldHours });
    return { db, outbox };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
