/** The outbox check: the backlog, its age and the dead letters. */
import { existsSync } from 'node:fs';
import { SqliteDatabase } from '../../core/sqlite.js';
import { agentDatabasePath } from '../../store/agent-db.js';
import { Outbox, type OutboxStatus } from '../../store/outbox.js';
import { type CheckResult, fail, fromError, pass, warn } from './check.js';

export function judgeOutbox(s: OutboxStatus): CheckResult {
  const name = 'outbox';
  const age = s.oldestPendingAgeSec;
  const detail = `${s.pending} pending${age !== null ? ` (oldest ${Math.round(age / 60)} min)` : ''}, ${s.dead} dead letter(s), ${s.delivered} delivered, ${s.unsynced} taken before clock sync`;
  if (s.pending + s.dead >= s.maxPending * 0.9)
    return fail(
      name,
      `${detail}; at ${s.maxPending} the terminal refuses new punches`,
      'restore the connection to the upstream (doctor api-token / mqtt) so the backlog drains',
    );
  if (s.dead > 0)
    return warn(
      name,
      detail,
      'dead letters were refused by the upstream: look at them with "edge-agent queue list --dead" and fix their cause',
    );
  if (age !== null && age > 3600) return warn(name, detail, 'punches are not leaving: check the api-token and mqtt checks');
  return pass(name, detail);
}

export async function checkOutbox(dataDir: string, options: { sinks?: string[]; maxPending?: number } = {}): Promise<CheckResult> {
  const path = agentDatabasePath(dataDir);
  if (!existsSync(path)) return warn('outbox', 'no database yet: no punches recorded', 'the agent creates it at its first start');
  let db: SqliteDatabase | null = null;
  try {
    db = await SqliteDatabase.open(path);
    const outbox = await Outbox.open(db, options);
    return judgeOutbox(await outbox.status());
  } catch (err) {
    return fromError('outbox', err, 'see the database check');
  } finally {
    await db?.close().catch(() => undefined);
  }
}
