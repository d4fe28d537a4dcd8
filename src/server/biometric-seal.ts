/**
 * Biometric data at rest in the service: each image and template is sealed with AES-256-GCM
 * (random 12-byte IV, 16-byte tag: `iv | tag | ciphertext`) under the service's biometric key.
 * The key is a 32-byte file next to the database (`<db>.biometric-key`, mode 0600, created on
 * first start) unless one is given. Stored records are never returned by any operation; the
 * digest that detects a re-enrolment of the same data is an HMAC under the same key.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { AgentError } from '../core/errors.js';

export class BiometricSeal {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new AgentError('SERVER_BIOMETRIC_KEY', `the biometric key has ${key.length} bytes, not 32`, {}, { hint: 'give a 32-byte key or delete the key file to have a new one made (stored biometrics then become unreadable)' });
    this.#key = key;
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

  digest(...parts: Array<Buffer | string>): string {
    const h = createHmac('sha256', this.#key);
    for (const p of parts) {
      h.update(p);
      h.update('\0');
    }
    return h.digest('hex');
  }
}
