/**
 * The terminal's one database file, `<dataDir>/agent.db`, shared by the outbox and the template
 * cache. Each store migrates its own component (`Outbox.open` → 'outbox', `TemplateCache.open` →
 * 'templates'), so opening here only applies the common pragmas (WAL, synchronous=FULL, busy
 * timeout, foreign keys; see src/core/sqlite.ts). The data folder is 0700 and the database files
 * 0600 (src/core/private-files.ts).
 */
import { join } from 'node:path';
import { makePrivateDir } from '../core/private-files.js';
import { SqliteDatabase } from '../core/sqlite.js';

export const AGENT_DB_FILE = 'agent.db';

export function agentDatabasePath(dataDir: string): string {
  return join(dataDir, AGENT_DB_FILE);
}

export function openAgentDatabase(dataDir: string, options: { busyTimeoutMs?: number } = {}): Promise<SqliteDatabase> {
  // The data folder is the agent's alone (punches, templates, secrets): 0700, tightened if looser.
  makePrivateDir(dataDir, { tighten: true });
  return SqliteDatabase.open(agentDatabasePath(dataDir), { busyTimeoutMs: options.busyTimeoutMs ?? 10_000, synchronous: 'FULL' });
}
