/**
 * Hashing of API secrets, user passwords (the attendance service) and the operations console's
 * password: scrypt (N=16384, r=8, p=1) with a 16-byte random salt, stored as
 * `scrypt$N$r$p$salt$hash` (base64). Verification is constant-time.
 *
 * Tested in test/unit/console/login.test.ts (the console's password checked against its scrypt
 * hash) and test/integration/console-http.test.ts (a password's hash printed, a short one refused).
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMS = { N: 16384, r: 8, p: 1 };
const KEYLEN = 32;

function derive(secret: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, KEYLEN, { ...opts, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** True for a stored hash as hashSecret writes it (`scrypt$N$r$p$salt$hash`, parameters a server can afford). */
export function isSecretHash(stored: string): boolean {
  const m = /^scrypt\$(\d{1,7})\$(\d{1,2})\$(\d{1,2})\$[A-Za-z0-9+/]{16,}={0,2}\$[A-Za-z0-9+/]{16,}={0,2}$/.exec(stored);
  if (!m) return false;
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return n >= 2 && (n & (n - 1)) === 0 && n <= 1 << 20 && r >= 1 && p >= 1 && 128 * n * r <= 64 * 1024 * 1024;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(secret, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
