/**
 * API keys and access tokens of the service.
 *
 * - A key is created with a role (`admin`: everything; `admin-audit`: reads only) by
 *   `edge-agent keys create` or `createApiKey`; its secret is shown once and stored scrypt-hashed.
 * - `POST /oauth/token` (password grant, `Authorization: Basic base64(clientId + ":")`) exchanges
 *   key and secret for a random bearer token, valid `tokenTtlSec` (default 3600 s). The token's
 *   SHA-256 is stored with the key's role, so tokens survive a restart of the service.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AgentError } from '../core/errors.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { hashSecret, verifySecret } from '../core/secret-hash.js';

export const ROLES = ['admin', 'admin-audit'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiKeyPair {
  apiKey: string;
  apiSecret: string;
  role: Role;
}

export interface TokenGrant {
  accessToken: string;
  expiresInSec: number;
  role: Role;
}

export function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}

let dummyHash: Promise<string> | undefined;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export async function createApiKey(db: SqliteDatabase, role: Role): Promise<ApiKeyPair> {
  if (!isRole(role)) {
    throw new AgentError('SERVER_BAD_ROLE', `unknown role "${String(role)}"`, { role }, { hint: `use one of ${ROLES.join(', ')}` });
  }
  const apiKey = `ak_${randomBytes(12).toString('hex')}`;
  const apiSecret = randomBytes(24).toString('base64url');
  const hash = await hashSecret(apiSecret);
  await db.transaction((tx) => tx.run('INSERT INTO server_api_keys (api_key, secret_hash, role, created_at) VALUES (?, ?, ?, ?)', [apiKey, hash, role, new Date().toISOString()]));
  return { apiKey, apiSecret, role };
}

export interface ApiKeyInfo {
  apiKey: string;
  role: Role;
  createdAt: string;
  /** Access tokens of this key that have not expired. */
  activeTokens: number;
}

/**
 * The keys of the service (never their secrets, which are only hashes here) and revoking one:
 * the key and its tokens go at once; a running service stops taking its cached tokens within
 * `TOKEN_RECHECK_MS`. (The only key SQL outside `createApiKey`, kept together for the storage
 * interface.)
 */
export async function listApiKeys(db: SqliteDatabase, now = Date.now()): Promise<ApiKeyInfo[]> {
  const rows = await db.all<{ api_key: string; role: Role; created_at: string; active: number }>(
    'SELECT k.api_key, k.role, k.created_at, (SELECT COUNT(*) FROM server_tokens t WHERE t.api_key = k.api_key AND t.expires_at > ?) AS active FROM server_api_keys k ORDER BY k.created_at, k.api_key',
    [now],
  );
  return rows.map((r) => ({ apiKey: r.api_key, role: r.role, createdAt: r.created_at, activeTokens: r.active }));
}

/** Deletes a key and its tokens; false when there is no such key. */
export async function revokeApiKey(db: SqliteDatabase, apiKey: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.run('DELETE FROM server_tokens WHERE api_key = ?', [apiKey]);
    return (await tx.run('DELETE FROM server_api_keys WHERE api_key = ?', [apiKey])).changes > 0;
  });
}

/** How long a running service trusts a token it has seen before it looks again (a revoked key's tokens stop within this). */
export const TOKEN_RECHECK_MS = 30_000;

export class TokenStore {
  readonly #db: SqliteDatabase;
  readonly #ttlSec: number;
  readonly #cache = new Map<string, { role: Role; expiresAt: number; checkedAt: number }>();

  constructor(db: SqliteDatabase, ttlSec: number) {
    this.#db = db;
    this.#ttlSec = ttlSec;
  }

  /** Exchanges key and secret for a token; `undefined` when they do not match. */
  async grant(apiKey: string, apiSecret: string): Promise<TokenGrant | undefined> {
    const row = await this.#db.get<{ secret_hash: string; role: Role }>('SELECT secret_hash, role FROM server_api_keys WHERE api_key = ?', [apiKey]);
    if (!row) {
      // Same work as for a known key, so the answer time does not tell which keys exist.
      dummyHash ??= hashSecret('not a key');
      await verifySecret(apiSecret, await dummyHash);
      return undefined;
    }
    if (!(await verifySecret(apiSecret, row.secret_hash))) return undefined;
    const accessToken = randomBytes(32).toString('base64url');
    const expiresAt = Date.now() + this.#ttlSec * 1000;
    const hash = sha256(accessToken);
    await this.#db.transaction(async (tx) => {
      await tx.run('DELETE FROM server_tokens WHERE expires_at < ?', [Date.now()]);
      await tx.run('INSERT INTO server_tokens (token_hash, api_key, role, expires_at) VALUES (?, ?, ?, ?)', [hash, apiKey, row.role, expiresAt]);
    });
    for (const [h, entry] of this.#cache) if (entry.expiresAt <= Date.now()) this.#cache.delete(h);
    this.#cache.set(hash, { role: row.role, expiresAt, checkedAt: Date.now() });
    return { accessToken, expiresInSec: this.#ttlSec, role: row.role };
  }

  /** The role of a valid token, or why it is not valid. */
  async check(token: string): Promise<{ role: Role } | { problem: 'unknown' | 'expired' }> {
    const hash = sha256(token);
    let entry = this.#cache.get(hash);
    // Looked up again now and then: `edge-agent keys revoke` deletes tokens behind this process's back.
    if (!entry || Date.now() - entry.checkedAt >= TOKEN_RECHECK_MS) {
      const row = await this.#db.get<{ role: Role; expires_at: number }>('SELECT role, expires_at FROM server_tokens WHERE token_hash = ?', [hash]);
      if (!row) {
        this.#cache.delete(hash);
        return { problem: 'unknown' };
      }
      entry = { role: row.role, expiresAt: row.expires_at, checkedAt: Date.now() };
      this.#cache.set(hash, entry);
    }
    if (Date.now() >= entry.expiresAt) {
      this.#cache.delete(hash);
      return { problem: 'expired' };
    }
    return { role: entry.role };
  }

  /** Invalidates every token issued so far (clients obtain new ones on their next 401). */
  async revokeAll(): Promise<void> {
    this.#cache.clear();
    await this.#db.transaction((tx) => tx.run('DELETE FROM server_tokens'));
  }
}
