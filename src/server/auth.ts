/**
 * API keys and access tokens of the service.
 *
 * - A key is created with a role (`admin`: everything; `admin-audit`: reads only) by
 *   `edge-agent keys create` or `createApiKey`; its secret is shown once and stored scrypt-hashed.
 * - `POST /oauth/token` (password grant, `Authorization: Basic base64(clientId + ":")`) exchanges
 *   key and secret for a random bearer token, valid `tokenTtlSec` (default 3600 s). The token's
 *   SHA-256 is stored with the key's role, so tokens survive a restart of the service and a
 *   token issued by one replica is accepted by every replica on the same database.
 * - Each replica keeps the tokens it has seen in memory and reads them again from the database
 *   when they were last read more than `recheckMs` ago (default 5 s): a revocation on one replica
 *   reaches the others within that time.
 *
 * Tested in test/integration/api-contract.test.ts (roles and tokens: a wrong secret refused, a new
 * token after a 401, an expired one refused) and test/integration/api-raw-http.test.ts (the token
 * endpoint's OAuth2 errors).
 */
import { createHash, randomBytes } from 'node:crypto';
import { AgentError } from '../core/errors.js';
import { hashSecret, verifySecret } from '../core/secret-hash.js';
import { isRole, ROLES, type Role } from './roles.js';
import type { ApiKeyInfo, ServiceStore } from './store/store.js';

export { isRole, ROLES, type ApiKeyInfo, type Role };
export const DEFAULT_TOKEN_RECHECK_MS = 5000;

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

let dummyHash: Promise<string> | undefined;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export async function createApiKey(store: ServiceStore, role: Role): Promise<ApiKeyPair> {
  if (!isRole(role)) {
    throw new AgentError('SERVER_BAD_ROLE', `unknown role "${String(role)}"`, { role }, { hint: `use one of ${ROLES.join(', ')}` });
  }
  const apiKey = `ak_${randomBytes(12).toString('hex')}`;
  const apiSecret = randomBytes(24).toString('base64url');
  const hash = await hashSecret(apiSecret);
  await store.transaction((tx) => tx.insertApiKey(apiKey, hash, role, new Date().toISOString()));
  return { apiKey, apiSecret, role };
}

/**
 * The keys of the service (never their secrets, which are only hashes here), by creation time.
 */
export function listApiKeys(store: ServiceStore, now = Date.now()): Promise<ApiKeyInfo[]> {
  return store.apiKeys(now);
}

/**
 * Deletes a key and its tokens at once; false when there is no such key. A running service (every
 * replica) stops taking the tokens it has cached within its recheck time (`DEFAULT_TOKEN_RECHECK_MS`).
 */
export function revokeApiKey(store: ServiceStore, apiKey: string): Promise<boolean> {
  return store.transaction((tx) => tx.deleteApiKey(apiKey));
}

interface CachedToken {
  role: Role;
  expiresAt: number;
  /** When the database last said the token exists (Date.now()). */
  checkedAt: number;
}

export class TokenStore {
  readonly #store: ServiceStore;
  readonly #ttlSec: number;
  readonly #recheckMs: number;
  readonly #cache = new Map<string, CachedToken>();

  constructor(store: ServiceStore, ttlSec: number, recheckMs = DEFAULT_TOKEN_RECHECK_MS) {
    this.#store = store;
    this.#ttlSec = ttlSec;
    this.#recheckMs = recheckMs;
  }

  /** Exchanges key and secret for a token; `undefined` when they do not match. */
  async grant(apiKey: string, apiSecret: string): Promise<TokenGrant | undefined> {
    const row = await this.#store.apiKey(apiKey);
    if (!row) {
      // Same work as for a known key, so the answer time does not tell which keys exist.
      dummyHash ??= hashSecret('not a key');
      await verifySecret(apiSecret, await dummyHash);
      return undefined;
    }
    if (!(await verifySecret(apiSecret, row.secretHash))) return undefined;
    const accessToken = randomBytes(32).toString('base64url');
    const now = Date.now();
    const expiresAt = now + this.#ttlSec * 1000;
    const hash = sha256(accessToken);
    await this.#store.transaction((tx) => tx.insertToken(hash, apiKey, row.role, expiresAt, now));
    for (const [h, entry] of this.#cache) if (entry.expiresAt <= now) this.#cache.delete(h);
    this.#cache.set(hash, { role: row.role, expiresAt, checkedAt: now });
    return { accessToken, expiresInSec: this.#ttlSec, role: row.role };
  }

  /** The role of a valid token, or why it is not valid. */
  async check(token: string): Promise<{ role: Role } | { problem: 'unknown' | 'expired' }> {
    const hash = sha256(token);
    const now = Date.now();
    let entry = this.#cache.get(hash);
    if (!entry || now - entry.checkedAt > this.#recheckMs) {
      const row = await this.#store.token(hash);
      if (!row) {
        this.#cache.delete(hash);
        return { problem: 'unknown' };
      }
      entry = { role: row.role, expiresAt: row.expiresAtMs, checkedAt: now };
      this.#cache.set(hash, entry);
    }
    if (now >= entry.expiresAt) {
      this.#cache.delete(hash);
      return { problem: 'expired' };
    }
    return { role: entry.role };
  }

  /** Invalidates every token issued so far (clients obtain new ones on their next 401). */
  async revokeAll(): Promise<void> {
    this.#cache.clear();
    await this.#store.transaction((tx) => tx.deleteTokens());
  }
}
