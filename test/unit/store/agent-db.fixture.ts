/**
 * What the store's unit tests share: a fresh agent database (a real SQLite file in a temp folder)
 * for every test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';

/** The database of the running test and its folder (`db` may be replaced by a test that reopens it: it is closed after the test). */
export interface TestDatabase {
  dir: string;
  db: SqliteDatabase;
}

/** Opens a new agent database before each test of the calling file and deletes it after. */
export function agentDatabasePerTest(prefix: string): TestDatabase {
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
