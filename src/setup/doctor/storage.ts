/** The data folder and database checks: the database's integrity, the files' modes, free disk. */
import { existsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { looseModes } from '../../core/private-files.js';
import { SqliteDatabase } from '../../core/sqlite.js';
import { agentDatabasePath } from '../../store/agent-db.js';
import { type CheckResult, fail, fromError, pass, warn } from './check.js';

/** Runs `PRAGMA integrity_check` on the agent database (read-only). */
export async function checkDatabase(dataDir: string): Promise<CheckResult> {
  const name = 'database';
  const path = agentDatabasePath(dataDir);
  if (!existsSync(path)) return warn(name, `no database yet at ${path}`, 'the agent creates it at its first start (edge-agent run)');
  let db: SqliteDatabase | null = null;
  try {
    db = await SqliteDatabase.open(path, { readonly: true });
    const rows = await db.integrityCheck();
    if (rows.length === 1 && rows[0] === 'ok') return pass(name, `${path}: integrity_check ok`);
    return fail(
      name,
      `${path}: integrity_check found ${rows.length} problem(s): ${rows.slice(0, 3).join('; ')}`,
      'stop the agent (systemctl stop edge-agent), copy agent.db, agent.db-wal and agent.db-shm aside (pending punches are in them), then restore the database from backup',
    );
  } catch (err) {
    return fromError(name, err, 'check the data folder and its permissions');
  } finally {
    await db?.close().catch(() => undefined);
  }
}

/**
 * The data folder 0700 and the database, WAL and shared-memory files 0600: they hold employee
 * codes, punch times and templates. Checked before anything here opens the database for writing
 * (which tightens the modes itself), so what was found is what is reported.
 */
export function checkFileModes(dataDir: string): CheckResult {
  const name = 'file-modes';
  if (!existsSync(dataDir))
    return warn(name, `no data folder yet at ${dataDir}`, 'the agent creates it (0700) at its first start, or edge-agent provision does');
  const loose = looseModes(dataDir, [agentDatabasePath(dataDir)]);
  if (loose.length === 0) return pass(name, `${dataDir} is 0700, its database files 0600`);
  return fail(
    name,
    `readable by others: ${loose.map((l) => `${l.path} ${l.mode} (must be ${l.want})`).join(', ')}`,
    `chmod 700 ${dataDir}; chmod 600 ${agentDatabasePath(dataDir)}*  (the agent also tightens them when it opens the database, and logs it)`,
  );
}

export const DISK_FAIL_BYTES = 64 * 1024 * 1024;
export const DISK_WARN_BYTES = 512 * 1024 * 1024;

export async function checkDisk(dataDir: string, statfsFn: typeof statfs = statfs): Promise<CheckResult> {
  const name = 'disk';
  let dir = dataDir;
  while (!existsSync(dir) && dir !== '/') dir = dir.replace(/\/[^/]*$/, '') || '/';
  try {
    const s = await statfsFn(dir);
    const free = Number(s.bavail) * Number(s.bsize);
    const total = Number(s.blocks) * Number(s.bsize);
    const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;
    const detail = `${mb(free)} free of ${mb(total)} at ${dir}`;
    if (free < DISK_FAIL_BYTES)
      return fail(
        name,
        detail,
        'free space now: the outbox refuses punches when the disk is full (journalctl --vacuum-size=50M, remove old images)',
      );
    if (free < DISK_WARN_BYTES) return warn(name, detail, 'free some space soon (journalctl --vacuum-size=50M)');
    return pass(name, detail);
  } catch (err) {
    return fromError(name, err, `check that ${dir} exists`);
  }
}
