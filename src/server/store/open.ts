/**
 * Opens the service's store named by `--db`: a `postgres://` URL, or an SQLite file path.
 *
 * Tested in test/unit/server/store/store.test.ts (a store opened for an SQLite path and a
 * postgres:// URL).
 */
import { AgentError } from '../../core/errors.js';
import { PgStore, redactUrl } from './pg-store.js';
import { SqliteStore } from './sqlite-store.js';
import { isPostgresUrl, type ServiceStore } from './store.js';

export async function openServiceStore(db: string): Promise<ServiceStore> {
  if (isPostgresUrl(db)) return PgStore.open(db);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db)) {
    throw new AgentError(
      'SERVER_DB_URL',
      `the service stores on SQLite (a file path) or PostgreSQL (postgres://...), not ${redactUrl(db).split(':')[0]}`,
      { db: redactUrl(db) },
    );
  }
  return SqliteStore.open(db);
}

/** `--db` as it may be shown: a URL without its password, or the file path. */
export function displayDb(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : db;
}
