/**
 * Secrets: API key and secret, MQTT username and password, the template key, the site key, the
 * ops keys that sign MQTT commands (`opsKey` for the site, `opsKeys` by operator key id) and the
 * operations console's password (`consolePassword`: a scrypt hash from
 * `edge-agent console --hash-password`, or the password itself).
 * They live in a separate file with mode 0600 (YAML or JSON, default `<dataDir>/secrets.yaml`)
 * or in systemd credentials (`$CREDENTIALS_DIRECTORY/<name>`), never in the config file and
 * never in a log line. A credential file wins over the secrets file for the same secret.
 *
 * Keys (`templateKey`, `siteKey`, `opsKey`, each of `opsKeys`) are 32 bytes, written as 64 hex
 * characters or base64. `opsKeys` is a mapping `{<key id>: <key>}` (key ids: letters, digits,
 * dot, dash, underscore, at most 64, not `site`); its systemd credential `ops-keys` holds the
 * same mapping as YAML.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import YAML from 'yaml';
import { AgentError } from '../core/errors.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import type { AgentConfig } from './config.js';

export interface Secrets {
  apiKey: string | null;
  apiSecret: string | null;
  mqttUsername: string | null;
  mqttPassword: string | null;
  templateKey: Buffer | null;
  siteKey: Buffer | null;
  /** The site's ops key: commands signed with key id `site`. */
  opsKey: Buffer | null;
  /** Operators' ops keys by key id: commands signed with that key id. */
  opsKeys: Record<string, Buffer>;
  /** The operations console's login: a `scrypt$...` hash (recommended) or the password. */
  consolePassword: string | null;
  /** Where each secret came from (file path or `credential:<name>`), for doctor; never the value. */
  sources: Partial<Record<SecretName, string>>;
}

export type SecretName =
  | 'apiKey'
  | 'apiSecret'
  | 'mqttUsername'
  | 'mqttPassword'
  | 'templateKey'
  | 'siteKey'
  | 'opsKey'
  | 'opsKeys'
  | 'consolePassword';

/** Where the secrets file is: `secretsFile` from the config, else `<dataDir>/secrets.yaml`. */
export function secretsFilePath(config: Pick<AgentConfig, 'dataDir' | 'secretsFile'>): string {
  return resolve(config.secretsFile ?? `${config.dataDir}/secrets.yaml`);
}

/** The key id of `opsKey` in a signed command. */
export const SITE_OPS_KEY_ID = 'site';
const OPS_KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** True for a name an operator's ops key may have (not `site`, which names `opsKey`). */
export function isOperatorKeyId(id: string): boolean {
  return OPS_KEY_ID.test(id) && id !== SITE_OPS_KEY_ID;
}

/** File names of systemd credentials for each secret. */
export const CREDENTIAL_NAMES: Record<SecretName, string> = {
  apiKey: 'api-key',
  apiSecret: 'api-secret',
  mqttUsername: 'mqtt-username',
  mqttPassword: 'mqtt-password',
  templateKey: 'template-key',
  siteKey: 'site-key',
  opsKey: 'ops-key',
  opsKeys: 'ops-keys',
  consolePassword: 'console-password',
};

export interface LoadSecretsOptions {
  /** The 0600 secrets file; a missing file is fine (empty), a readable-by-others one is not. */
  file?: string | null;
  /** systemd's `$CREDENTIALS_DIRECTORY`. */
  credentialsDir?: string | null;
  /** `--api-secret-file`: a file holding only the API secret. */
  apiSecretFile?: string | null;
  /** `--api-key` from the command line. */
  apiKey?: string | null;
  /** Refuse a secrets file readable by group or others (default true). */
  requirePrivate?: boolean;
}

/** Parses a 32-byte key from 64 hex characters or base64. */
export function parseKey(value: string, name: string): Buffer {
  const v = value.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(v)) key = Buffer.from(v, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(v)) key = Buffer.from(v, 'base64');
  if (key?.length !== 32) {
    throw new AgentError(
      'SECRETS_BAD_KEY',
      `${name} is not a 32-byte key`,
      { name },
      { hint: `write ${name} as 64 hex characters (openssl rand -hex 32)` },
    );
  }
  return key;
}

export function checkPrivate(file: string): void {
  const st = statSync(file);
  if ((st.mode & 0o077) !== 0) {
    throw new AgentError(
      'SECRETS_PERMISSIONS',
      `secrets file ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)})`,
      { file, mode: st.mode & 0o777 },
      { hint: `run: chmod 600 ${file}` },
    );
  }
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint =
      e.code === 'EACCES'
        ? `permission denied: run this as root or as the agent user (sudo -u edge-agent ..., or sudo)`
        : e.code === 'ENOENT'
          ? `${file} does not exist: check the path, or write it with "edge-agent provision"`
          : 'check the path and that the agent user may read it';
    throw new AgentError('SECRETS_UNREADABLE', `cannot read ${what} ${file}: ${e.code ?? e.message}`, { file }, { hint, cause: err });
  }
}

export function emptySecrets(): Secrets {
  return {
    apiKey: null,
    apiSecret: null,
    mqttUsername: null,
    mqttPassword: null,
    templateKey: null,
    siteKey: null,
    opsKey: null,
    opsKeys: {},
    consolePassword: null,
    sources: {},
  };
}

/** `opsKeys` from a mapping (the secrets file) or YAML text (the credential). */
function parseOperatorKeys(value: unknown, where: string): Record<string, Buffer> {
  let doc = value;
  if (typeof doc === 'string') {
    try {
      doc = YAML.parse(doc);
    } catch (err) {
      throw new AgentError(
        'SECRETS_SYNTAX',
        `opsKeys in ${where} is not a YAML mapping`,
        { where },
        { hint: 'write opsKeys as a mapping of key id to key: opsKeys: {alice: <64 hex>}', cause: err },
      );
    }
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new AgentError(
      'SECRETS_SYNTAX',
      `opsKeys in ${where} must be a mapping of key id to key`,
      { where },
      { hint: 'write opsKeys as a mapping of key id to key: opsKeys: {alice: <64 hex>}' },
    );
  }
  const out: Record<string, Buffer> = {};
  for (const [id, key] of Object.entries(doc as Record<string, unknown>)) {
    if (!isOperatorKeyId(id)) {
      throw new AgentError(
        'SECRETS_SYNTAX',
        `opsKeys in ${where} has a key id that is not allowed: ${JSON.stringify(id.slice(0, 70))}`,
        { where },
        { hint: 'key ids are letters, digits, dot, dash or underscore, at most 64, and not "site" (that is opsKey)' },
      );
    }
    out[id] = parseKey(String(key), `opsKeys.${id}`);
  }
  return out;
}

export function loadSecrets(options: LoadSecretsOptions = {}): Secrets {
  const out = emptySecrets();
  const set = (name: SecretName, value: unknown, source: string) => {
    if (name === 'opsKeys') out.opsKeys = parseOperatorKeys(value, source);
    else if (name === 'templateKey' || name === 'siteKey' || name === 'opsKey') out[name] = parseKey(String(value), name);
    else out[name] = String(value).replace(/\r?\n$/, '');
    out.sources[name] = source;
  };
  if (options.file) {
    let exists = true;
    try {
      statSync(options.file);
    } catch {
      exists = false;
    }
    if (exists) {
      if (options.requirePrivate !== false) checkPrivate(options.file);
      let doc: unknown;
      try {
        doc = YAML.parse(readText(options.file, 'secrets file'));
      } catch (err) {
        if (err instanceof AgentError) throw err;
        throw new AgentError(
          'SECRETS_SYNTAX',
          `secrets file ${options.file} is not valid YAML or JSON`,
          { file: options.file },
          { hint: 'fix the file or write it again with "edge-agent provision"', cause: err },
        );
      }
      if (doc !== null && doc !== undefined) {
        if (typeof doc !== 'object' || Array.isArray(doc))
          throw new AgentError('SECRETS_SYNTAX', `secrets file ${options.file} must hold a mapping`, { file: options.file });
        for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
          if (!(k in CREDENTIAL_NAMES)) {
            throw new AgentError(
              'SECRETS_UNKNOWN_KEY',
              `secrets file ${options.file} has an unknown key "${k}"`,
              { file: options.file, key: k },
              { hint: `known keys: ${Object.keys(CREDENTIAL_NAMES).join(', ')}` },
            );
          }
          if (v !== null && v !== undefined) set(k as SecretName, v, options.file);
        }
      }
    }
  }
  const credDir = options.credentialsDir === undefined ? (process.env.CREDENTIALS_DIRECTORY ?? null) : options.credentialsDir;
  if (credDir) {
    for (const [name, file] of Object.entries(CREDENTIAL_NAMES) as Array<[SecretName, string]>) {
      const path = join(credDir, file);
      let text: string | null = null;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        text = null;
      }
      if (text !== null) set(name, text, `credential:${file}`);
    }
  }
  if (options.apiSecretFile) set('apiSecret', readText(options.apiSecretFile, 'API secret file'), options.apiSecretFile);
  if (options.apiKey) {
    out.apiKey = options.apiKey;
    out.sources.apiKey = 'flag:--api-key';
  }
  return out;
}

/** A fresh random 32-byte key (template key, site key, ops key). */
export function generateKey(): Buffer {
  return randomBytes(32);
}

/** The secrets as the file holds them: strings, keys in hex, absent secrets left out. */
export function serializeSecrets(secrets: Omit<Secrets, 'sources'>): string {
  const doc: Record<string, string | Record<string, string>> = {};
  for (const name of Object.keys(CREDENTIAL_NAMES) as SecretName[]) {
    if (name === 'opsKeys') {
      const keys = Object.entries(secrets.opsKeys ?? {});
      if (keys.length) doc.opsKeys = Object.fromEntries(keys.map(([id, k]) => [id, k.toString('hex')]));
      continue;
    }
    const v = secrets[name];
    if (v === null || v === undefined) continue;
    doc[name] = Buffer.isBuffer(v) ? v.toString('hex') : v;
  }
  return `# edge-agent secrets: keep this file mode 0600, owned by the agent user. Written by "edge-agent provision".\n${YAML.stringify(doc)}`;
}

/** Writes the secrets file atomically with mode 0600. */
export function writeSecrets(file: string, secrets: Omit<Secrets, 'sources'>): void {
  writeFileAtomic(file, serializeSecrets(secrets), 0o600);
}

/** How a secret is shown to a person: whether it is set and its length, never its content. */
export function maskSecret(value: string | Buffer | null | undefined): string {
  if (value === null || value === undefined || value.length === 0) return '(not set)';
  if (Buffer.isBuffer(value)) return `set (${value.length * 8}-bit key)`;
  return `set (${value.length} characters)`;
}

/** Every secret value as text (keys in hex and base64 too), for checking that output never contains one. */
export function secretValues(secrets: Omit<Secrets, 'sources'>): string[] {
  const out: string[] = [];
  for (const name of Object.keys(CREDENTIAL_NAMES) as SecretName[]) {
    const values = name === 'opsKeys' ? Object.values(secrets.opsKeys ?? {}) : [secrets[name]];
    for (const v of values) {
      if (v === null || v === undefined || v.length === 0) continue;
      if (Buffer.isBuffer(v)) out.push(v.toString('hex'), v.toString('base64'));
      else out.push(v);
    }
  }
  return out;
}

/** Reads a file holding one secret (trailing newline dropped); names the flag when it cannot. */
export function readSecretFile(file: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AgentError(
      'SECRETS_UNREADABLE',
      `cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { file, flag },
      { hint: `check the path given to ${flag}`, cause: err },
    );
  }
  const value = text.replace(/\r?\n$/, '');
  if (!value) throw new AgentError('SECRETS_EMPTY', `${flag} ${file} is empty`, { file, flag }, { hint: `write the secret into ${file}` });
  return value;
}

export function readKeyFile(file: string, flag: string, name: 'templateKey' | 'siteKey' | 'opsKey' | `opsKeys.${string}`): Buffer {
  return parseKey(readSecretFile(file, flag), name);
}
