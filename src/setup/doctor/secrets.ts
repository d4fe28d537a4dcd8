/**
 * The keys and secrets checks: the secrets file (or systemd credentials) readable, private and
 * complete; the key that signs MQTT commands; the template key against the stored templates.
 */
import { existsSync, statSync } from 'node:fs';
import type { AgentConfig } from '../../config/config.js';
import { loadSecrets, type Secrets, secretsFilePath } from '../../config/secrets.js';
import { agentDatabasePath } from '../../store/agent-db.js';
import { type CheckResult, fail, fromError, pass, warn } from './check.js';

export function checkSecrets(
  config: AgentConfig,
  options: { file?: string; credentialsDir?: string | null } = {},
): { result: CheckResult; secrets: Secrets | null } {
  const file = options.file ?? secretsFilePath(config);
  const credentialsDir = options.credentialsDir === undefined ? (process.env.CREDENTIALS_DIRECTORY ?? null) : options.credentialsDir;
  if (!existsSync(file) && !credentialsDir) {
    return {
      result: fail('secrets', `no secrets file at ${file} and no systemd credentials`, 'run "edge-agent provision" to write it'),
      secrets: null,
    };
  }
  let secrets: Secrets;
  try {
    secrets = loadSecrets({ file, credentialsDir });
  } catch (err) {
    return { result: fromError('secrets', err, `check ${file}`), secrets: null };
  }
  const missing: string[] = [];
  if (config.upstream.includes('api') || config.api.url) {
    if (!secrets.apiKey) missing.push('apiKey');
    if (!secrets.apiSecret) missing.push('apiSecret');
  }
  if (!secrets.templateKey) missing.push('templateKey');
  const where = existsSync(file)
    ? `${file} (mode ${(statSync(file).mode & 0o777).toString(8).padStart(4, '0')})`
    : `credentials in ${credentialsDir}`;
  if (missing.length)
    return {
      result: fail(
        'secrets',
        `${where} is readable but lacks ${missing.join(', ')}`,
        'run "edge-agent provision" and give them (a template key is generated when none is given)',
      ),
      secrets,
    };
  return { result: pass('secrets', `${where} is readable and private; has ${Object.keys(secrets.sources).join(', ')}`), secrets };
}

/** Whether the terminal holds a key that signs MQTT commands (and where it is), when it takes commands at all. */
export function checkOpsKey(config: AgentConfig, secrets: Pick<Secrets, 'opsKey' | 'opsKeys' | 'sources'> | null): CheckResult {
  if (!config.mqtt.url || !config.ops.enabled)
    return pass(
      'ops-key',
      `not needed: this terminal takes no commands over MQTT (${config.mqtt.url ? 'ops.enabled is false' : 'no mqtt.url'})`,
    );
  if (!secrets) return warn('ops-key', 'not checked: the secrets could not be read', 'fix the secrets first (see the secrets check)');
  const operators = Object.keys(secrets.opsKeys).sort();
  if (!secrets.opsKey && operators.length === 0) {
    return warn(
      'ops-key',
      'no ops key (opsKey or opsKeys in the secrets): every command over MQTT (ping, delete-user, restart, ...) is refused with OPS_UNAUTHENTICATED',
      'run "edge-agent provision --ops-key-file FILE" with the site\'s key from central operations, or --generate-ops-key',
    );
  }
  const held = [
    ...(secrets.opsKey ? [`opsKey (key id site) from ${secrets.sources.opsKey ?? 'the secrets'}`] : []),
    ...(operators.length ? [`opsKeys ${operators.join(', ')} from ${secrets.sources.opsKeys ?? 'the secrets'}`] : []),
  ];
  return pass(
    'ops-key',
    `commands over MQTT must be signed: ${held.join('; ')}; signatures are accepted within ±${config.ops.authWindowSec} s of this terminal's clock`,
  );
}

/** Decrypts a stored template with the key; passed in by the command (the template cache's verifyKey). */
export type TemplateKeyVerifier = (dataDir: string, key: Buffer) => Promise<{ ok: boolean; checked: number; detail?: string }>;

export async function checkTemplateKey(dataDir: string, key: Buffer | null, verify: TemplateKeyVerifier | null): Promise<CheckResult> {
  const name = 'template-key';
  if (!key)
    return fail(
      name,
      'no template key: templates cannot be stored or read',
      'run "edge-agent provision" (it generates one when none is given)',
    );
  if (!verify)
    return warn(
      name,
      'a 256-bit key is set but this build cannot open the template cache to try it',
      'this build has no drivers for it: reinstall edge-agent from its release',
    );
  if (!existsSync(agentDatabasePath(dataDir)))
    return warn(name, 'a 256-bit key is set; no database yet to try it on', 'the agent creates the database at its first start');
  try {
    const r = await verify(dataDir, key);
    if (r.ok)
      return pass(
        name,
        r.checked
          ? `the key decrypts the stored templates (${r.checked} tried)`
          : 'a valid 256-bit key; no templates stored yet to try it on',
      );
    return fail(
      name,
      r.detail ?? 'the key does not decrypt the stored templates',
      'the secrets file holds another key than the one the templates were stored with: restore the right templateKey, or re-sync templates from the site',
    );
  } catch (err) {
    return fromError(name, err, 'see the database check');
  }
}
