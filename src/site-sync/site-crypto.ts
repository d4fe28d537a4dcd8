/**
 * Site template records travel encrypted under the site key (AES-256-GCM, a random 96-bit nonce
 * per message). The additional data binds a record to its topic (site and employee code), so a
 * record copied to another person's topic does not decrypt.
 *
 * Wire form (JSON): {"v": 1, "alg": "A256GCM", "kid": "<8 hex of sha256(key)>", "nonce": b64, "data": b64(ciphertext || tag)}
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../core/errors.js';

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function aad(site: string, employeeCode: string): Buffer {
  return Buffer.from(`edge-agent:site-templates:v1:${site}:${employeeCode}`, 'utf8');
}

export function sealSiteRecord(key: Buffer, site: string, employeeCode: string, plaintext: Buffer): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(site, employeeCode));
  const data = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return Buffer.from(
    JSON.stringify({ v: 1, alg: 'A256GCM', kid: keyId(key), nonce: nonce.toString('base64'), data: data.toString('base64') }),
  );
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const EnvelopeSchema = z.object({
  v: z.literal(1),
  alg: z.literal('A256GCM'),
  kid: z.string().max(64),
  nonce: z.string().length(16).regex(BASE64),
  data: z.string().regex(BASE64),
});

export function openSiteRecord(key: Buffer, site: string, employeeCode: string, payload: Buffer): Buffer {
  let json: unknown;
  try {
    json = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new AgentError('OPS_SYNC_MALFORMED', `the site template message for ${employeeCode} is not JSON`, { employeeCode });
  }
  const parsed = EnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    throw new AgentError('OPS_SYNC_MALFORMED', `the site template message for ${employeeCode} is not a v1 A256GCM envelope`, {
      employeeCode,
    });
  }
  const env = parsed.data;
  if (env.kid !== keyId(key)) {
    throw new AgentError(
      'OPS_SYNC_WRONG_KEY',
      `the site template message for ${employeeCode} was sealed under another site key (kid ${String(env.kid)}, ours ${keyId(key)})`,
      { employeeCode, kid: env.kid },
      { hint: 'give every terminal of the site the same site key (edge-agent provision --site-key-file)' },
    );
  }
  const data = Buffer.from(env.data, 'base64');
  if (data.length < 16)
    throw new AgentError('OPS_SYNC_MALFORMED', `the site template message for ${employeeCode} is truncated`, { employeeCode });
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(env.nonce, 'base64'));
    decipher.setAAD(aad(site, employeeCode));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
  } catch (err) {
    throw new AgentError(
      'OPS_SYNC_TAMPERED',
      `the site template message for ${employeeCode} failed authentication`,
      { employeeCode },
      { hint: 'the message was altered or moved to another topic; re-enrol or republish from the origin terminal', cause: err },
    );
  }
}
