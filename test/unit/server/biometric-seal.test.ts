/** Where the service's biometric key comes from (src/server/biometric-seal.ts), and what is refused. */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIOMETRIC_KEY_ENV, BiometricSeal } from '../../../src/server/biometric-seal.js';

const dir = () => mkdtempSync(join(tmpdir(), 'seal-'));
const pg = { kind: 'postgres' as const, path: 'postgres://svc@db/attendance' };

/** The same key seals what the other opens. */
function sameKey(a: BiometricSeal, b: BiometricSeal): boolean {
  return a.keyCheck() === b.keyCheck();
}

describe('BiometricSeal.forService', () => {
  it('reads the key file the environment names (64 hex characters) and the systemd credential', () => {
    const key = randomBytes(32);
    const d = dir();
    const file = join(d, 'biometric.key');
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600 });
    expect(sameKey(BiometricSeal.forService(pg, undefined, { [BIOMETRIC_KEY_ENV]: file }), new BiometricSeal(key))).toBe(true);
    const creds = join(d, 'credentials');
    mkdirSync(creds);
    writeFileSync(join(creds, 'biometric-key'), key, { mode: 0o400 });
    expect(sameKey(BiometricSeal.forService(pg, undefined, { CREDENTIALS_DIRECTORY: creds }), new BiometricSeal(key))).toBe(true);
  });

  it('refuses a key file that group or others may read, saying how to fix it', () => {
    const file = join(dir(), 'biometric.key');
    writeFileSync(file, randomBytes(32).toString('hex'));
    chmodSync(file, 0o644);
    expect(() => BiometricSeal.forService(pg, undefined, { [BIOMETRIC_KEY_ENV]: file })).toThrow(
      expect.objectContaining({
        code: 'SERVER_BIOMETRIC_KEY',
        message: expect.stringContaining('mode 0644'),
        hint: expect.stringContaining(`chmod 600 ${file}`),
      }),
    );
  });

  it('on PostgreSQL without a key refuses to start; on SQLite makes a 0600 key file next to the database', () => {
    expect(() => BiometricSeal.forService(pg, undefined, {})).toThrow(
      expect.objectContaining({ code: 'SERVER_BIOMETRIC_KEY', hint: expect.stringContaining(BIOMETRIC_KEY_ENV) }),
    );
    const db = join(dir(), 'service.db');
    const first = BiometricSeal.forService({ kind: 'sqlite', path: db }, undefined, {});
    expect(statSync(`${db}.biometric-key`).mode & 0o777).toBe(0o600);
    expect(sameKey(BiometricSeal.forService({ kind: 'sqlite', path: db }, undefined, {}), first)).toBe(true);
  });
});
