/**
 * The terminal's one database file, `<dataDir>/agent.db`, shared by the outbox and the template
 * cache. Each store migrates its own component (`Outbox.open` → 'outbox', `TemplateCache.open` →
 * 'templates'), so opening here only applies the common pragmas (WAL, synchronous=FULL, busy
 * timeout, foreign keys; see src/core/sqlite.ts). The data folder is 0700 and the database files
 * 0600 (src/core/private-files.ts).
 *
 * Tested in test/unit/core/private-files.test.ts (the data folder 0700, the database, WAL and
 * shared memory 0600) and test/unit/store/outbox/schema.test.ts (the stores migrating their
 * components on it).
 */
import { join } from 'node:path';
import { makePrivateDir } from '../core/private-files.js';
import { AgentError, isAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { headerProblem, SqliteDatabase } from '../core/sqlite.js';
import { monotonicMs } from '../core/time.js';

const log = logger('store:db');

export const AGENT_DB_FILE = 'agent.db';

export function agentDatabasePath(dataDir: string): string {
  return join(dataDir, AGENT_DB_FILE);
}

/** How long the damage check on open may take at most (ms); a bigger database is checked in part. */
export const OPEN_CHECK_MS = 1000;

/**
 * Opens the terminal's database for every command that reads it (run, queue, punch), and checks
 * it for damage first, within a bound: the file's header and size, then `PRAGMA quick_check(1)`
 * for at most `checkMs` (the whole file on any terminal-sized database). Damage is
 * `STORE_DATABASE_CORRUPT` with what to do, the same for every command, instead of a command
 * going on with inconsistent counts. Doctor runs the full integrity check.
 */
export async function openAgentDatabase(
  dataDir: string,
  options: { busyTimeoutMs?: number; checkMs?: number } = {},
): Promise<SqliteDatabase> {
  // The data folder is the agent's alone (punches, templates, secrets): 0700, tightened if looser.
  makePrivateDir(dataDir, { tighten: true });
  const path = agentDatabasePath(dataDir);
  const header = headerProblem(path);
  if (header) throw corrupt(path, header);
  let db: SqliteDatabase;
  try {
    db = await SqliteDatabase.open(path, { busyTimeoutMs: options.busyTimeoutMs ?? 10_000, synchronous: 'FULL' });
  } catch (err) {
    throw isAgentError(err, 'SQLITE_CORRUPT') ? corrupt(path, err.message, err) : err;
  }
  const started = monotonicMs();
  const check = await db.quickCheck(options.checkMs ?? OPEN_CHECK_MS).catch(async (err: unknown) => {
    await db.close().catch(() => undefined);
    throw err;
  });
  if (check.problem) {
    await db.close().catch(() => undefined);
    throw corrupt(path, check.problem);
  }
  if (!check.complete)
    log.debug(
      { path, ms: Math.round(monotonicMs() - started) },
      'database checked in part on open (too big to check whole in the time allowed); edge-agent doctor checks all of it',
    );
  return db;
}

function corrupt(path: string, problem: string, cause?: unknown): AgentError {
  return new AgentError('STORE_DATABASE_CORRUPT', `the terminal's database ${path} is damaged: ${problem}`, { path }, { cause });
}
