/**
 * What the outbox's unit tests share: a fresh agent database (a real SQLite file in a temp folder)
 * for every test, and a punch to record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { SqliteDatabase } from '../../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import type { PunchInput } from '../../../../src/store/outbox.js';

/** The database of the running test and its folder (`db` may be replaced by a test that reopens it: it is closed after the test). */
export interface TestDatabase {
  dir: string;
  db: SqliteDatabase;
}

/** Opens a new agent database before each test of the calling file and deletes it after. */
export function agentDatabasePerTest(prefix = 'outbox-'): TestDatabase {
  const store = {} as TestDatabase;
  beforeEach(async () => {
    store.dir = mkdtempSync(join(tmpdir(), prefix));
    store.db = await openAgentDatabase(store.dir);
  });
  afterEach(async () => {
    await store.db.close();
    rmSync(store.dir, { recursive: true, force: true });
  });
  return store;
}

/** A synchronized check-in (or check-out) of `code` at 2026-03-01 08:00:00 +01:00, manual, on terminal t1. */
export function punch(code: string, direction: 'in' | 'out' = 'in', extra: Partial<PunchInput> = {}): PunchInput {
  return { employeeCode: code, direction, localTime: '2026-03-01 08:00:00', tzOffset: 60, source: 'manual', terminalId: 't1', ...extra };
}
