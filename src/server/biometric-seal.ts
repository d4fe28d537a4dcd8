/**
 * Biometric data at rest in the service: each image and template is sealed with AES-256-GCM
 * (random 12-byte IV, 16-byte tag: `iv | tag | ciphertext`) under the service's biometric key.
 * Stored records are never returned by any operation; the digest that detects a re-enrolment of
 * the same data is an HMAC under the same key.
 *
 * Where the key comes from (`BiometricSeal.forService`):
 * 1. a key given to the service (`biometricKey`);
 * 2. the file named by `EDGE_AGENT_BIOMETRIC_KEY_FILE`, or the systemd credential
 *    `biometric-key` (`$CREDENTIALS_DIRECTORY/biometric-key`): 32 bytes, or 64 hex characters;
 * 3. SQLite only: a 32-byte file next to the database (`<db>.biometric-key`, mode 0600, created
 *    on first start).
 * PostgreSQL has no file next to it, and every replica must seal with the same key: without 1 or
 * 2 the service refuses to start (SERVER_BIOMETRIC_KEY, with how to make one). The database keeps
 * an HMAC check value of the key, so a replica started with another key refuses to start too.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentError } from '../core/errors.js';

export const BIOMETRIC_KEY_ENV = 'EDGE_AGENT_BIOMETRIC_KEY_FILE';
const MAKE_KEY_HINT = `make one key for every replica (openssl rand -hex 32 > /etc/edge-agent/biometric.key; chmod 600 it) and give it to each with ${BIOMETRIC_KEY_ENV}=FILE or as the systemd credential "biometric-key"`;

/**
 * A key file: 32 raw bytes, or 64 hex characters (a trailing newline is fine). One that group or
 * others may read is refused, as the agent refuses such a secrets file: every replica's key opens
 * every stored template.
 */
function readKeyFile(file: string, source: string): Buffer {
  let raw: Buffer;
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
    raw = readFileSync(file);
  } catch (err) {
    throw new AgentError(
      'SERVER_BIOMETRIC_KEY',
      `cannot read the biometric key file ${file} (${source}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { file },
      {
        hint: `check the path and that the service user may read it; ${MAKE_KEY_HINT}`,
        cause: err,
      },
    );
  }
  if ((mode & 0o077) !== 0) {
    throw new AgentError(
      'SERVER_BIOMETRIC_KEY',
      `the biometric key file ${file} (${source}) may be read by others (mode 0${mode.toString(8)})`,
      { file, mode: `0${mode.toString(8)}` },
      {
        hint: `run: chmod 600 ${file} (owned by the user the service runs as)`,
      },
    );
  }
  const text = raw.toString('latin1').trim();
  if (raw.length !== 32 && /^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  return raw;
}

export class BiometricSeal {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32)
      throw new AgentError(
        'SERVER_BIOMETRIC_KEY',
        `the biometric key has ${key.length} bytes, not 32`,
        {},
        { hint: 'give a 32-byte key or delete the key file to have a new one made (stored biometrics then become unreadable)' },
      );
    this.#key = key;
  }

  /** The key of a service on `db` (see the top of this file for the order). */
  static forService(
    db: { kind: 'sqlite' | 'postgres'; path: string },
    given?: Buffer,
    env: NodeJS.ProcessEnv = process.env,
  ): BiometricSeal {
    if (given) return new BiometricSeal(given);
    const file = env[BIOMETRIC_KEY_ENV];
    if (file) return new BiometricSeal(readKeyFile(file, BIOMETRIC_KEY_ENV));
    const credential = env.CREDENTIALS_DIRECTORY ? join(env.CREDENTIALS_DIRECTORY, 'biometric-key') : undefined;
    if (credential && existsSync(credential)) return new BiometricSeal(readKeyFile(credential, 'systemd credential biometric-key'));
    if (db.kind === 'sqlite') return BiometricSeal.forDatabase(db.path);
    throw new AgentError(
      'SERVER_BIOMETRIC_KEY',
      'the service on PostgreSQL needs its biometric key: no key file is given',
      {},
      { hint: MAKE_KEY_HINT },
    );
  }

  /** Loads the key file, creating it (0600) when it does not exist; an in-memory key for `:memory:`. */
  static forDatabase(dbPath: string): BiometricSeal {
    if (dbPath === ':memory:') return new BiometricSeal(randomBytes(32));
    const file = `${dbPath}.biometric-key`;
    if (!existsSync(file)) {
      writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
    }
    chmodSync(file, 0o600);
    return new BiometricSeal(readFileSync(file));
  }

  seal(data: Buffer): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(data), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer): Buffer {
    const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  }

  /** A check value of the key (an HMAC of a constant): equal values, same key; it reveals nothing of the key. */
  keyCheck(): string {
    return this.digest('edge-agent biometric key check');
  }

  digest(...parts: Array<Buffer | string>): string {
    const h = createHmac('sha256', this.#key);
    for (const p of parts) {
      h.update(p);
      h.update('\0');
    }
    return h.digest('hex');
  }
}
