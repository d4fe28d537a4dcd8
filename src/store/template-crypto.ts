/**
 * Encryption of template blobs at rest: AES-256-GCM under the 32-byte template key, a fresh
 * random 96-bit nonce per blob, and as additional data the template id and the employee code, so
 * a blob copied onto another row (another person) fails to decrypt instead of matching someone
 * else. Stored blob = ciphertext ‖ 16-byte tag; the nonce sits in its own column.
 *
 * Tested in test/unit/store/template-cache/envelope.test.ts (no template bytes in clear in the
 * files, a wrong key refused, a tampered blob or one moved to another row detected).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AgentError } from '../core/errors.js';

export const TEMPLATE_KEY_BYTES = 32;
export const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface SealedBlob {
  nonce: Buffer;
  blob: Buffer;
}

function aad(id: string, employeeCode: string): Buffer {
  return Buffer.from(`edge-agent/template/v1\0${id}\0${employeeCode}`, 'utf8');
}

export function checkTemplateKey(key: Buffer | null | undefined): Buffer {
  if (!key) {
    throw new AgentError(
      'STORE_TEMPLATE_KEY_MISSING',
      'no template key: the template cache cannot be opened without it',
      {},
      {
        hint: 'run "edge-agent provision" (it generates one), or put templateKey (64 hex characters, openssl rand -hex 32) in the 0600 secrets file or the systemd credential "template-key"',
      },
    );
  }
  if (key.length !== TEMPLATE_KEY_BYTES) {
    throw new AgentError(
      'STORE_TEMPLATE_KEY_INVALID',
      `the template key is ${key.length} bytes, it must be ${TEMPLATE_KEY_BYTES}`,
      { bytes: key.length },
      { hint: 'write templateKey as 64 hex characters (openssl rand -hex 32)' },
    );
  }
  return key;
}

export function sealTemplate(key: Buffer, id: string, employeeCode: string, plaintext: Uint8Array): SealedBlob {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(id, employeeCode));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { nonce, blob: body };
}

/** Decrypts a blob; null when the key, the nonce, the row's identity or the bytes do not match. */
export function openTemplate(key: Buffer, id: string, employeeCode: string, nonce: Uint8Array, blob: Uint8Array): Uint8Array | null {
  if (nonce.length !== NONCE_BYTES || blob.length < TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(aad(id, employeeCode));
    decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
    return new Uint8Array(Buffer.concat([decipher.update(blob.subarray(0, blob.length - TAG_BYTES)), decipher.final()]));
  } catch {
    return null;
  }
}
