// Database files are private whatever the umask: the folder 0700, the database, WAL and
// shared-memory files 0600; looser ones found on open are tightened. Real files, real SQLite.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { looseModes, makePrivateDir, sqliteFiles } from '../../../src/core/private-files.js';
import { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { checkFileModes } from '../../../src/setup/doctor/storage.js';

const mode = (p: string) => statSync(p).mode & 0o777;
let umask = 0;
beforeEach(() => {
  umask = process.umask(0o022); // the usual umask: files 0644, folders 0755 unless set
});
afterEach(() => {
  process.umask(umask);
});

describe('private database files', () => {
  it('creates missing folders 0700 and the database, WAL and shared memory 0600 under umask 022', async () => {
    const root = mkdtempSync(join(tmpdir(), 'modes-'));
    const path = join(root, 'a', 'b', 'x.db');
    const db = await SqliteDatabase.open(path);
    await db.exec('CREATE TABLE t (v)');
    await db.transaction((d) => d.run('INSERT INTO t VALUES (1)'));
    expect(sqliteFiles(path).map(mode)).toEqual([0o600, 0o600, 0o600]);
    expect([mode(join(root, 'a')), mode(join(root, 'a', 'b'))]).toEqual([0o700, 0o700]);
    expect(mode(root)).toBe(0o700); // mkdtemp's own; an existing folder is not the wrapper's to change
    await db.close();
  });

  it('tightens a database, WAL and shared memory found 0644 when it opens them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modes-'));
    chmodSync(dir, 0o755);
    const path = join(dir, 'agent.db');
    const first = await SqliteDatabase.open(path);
    await first.exec('CREATE TABLE t (v)');
    await first.transaction((d) => d.run('INSERT INTO t VALUES (1)'));
    for (const f of sqliteFiles(path)) chmodSync(f, 0o644); // as an older release left them
    expect(looseModes(dir, [path]).map((l) => [l.path, l.mode])).toEqual([[dir, '0755'], ...sqliteFiles(path).map((f) => [f, '0644'])]);
    expect(checkFileModes(dir)).toMatchObject({
      name: 'file-modes',
      status: 'fail',
      detail: expect.stringContaining(`${path} 0644 (must be 0600)`),
      hint: expect.stringContaining('chmod 700'),
    });
    // The agent's own open tightens its data folder as well; the file stays readable through it.
    const second = await openAgentDatabase(dir);
    expect(sqliteFiles(path).map(mode)).toEqual([0o600, 0o600, 0o600]);
    expect(mode(dir)).toBe(0o700);
    expect(await second.get('SELECT v FROM t')).toEqual({ v: 1 });
    expect(checkFileModes(dir)).toMatchObject({ status: 'pass' });
    await second.close();
    await first.close();
  });

  it('leaves a read-only open alone and never loosens a stricter mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modes-'));
    const path = join(dir, 'x.db');
    await (await SqliteDatabase.open(path)).close();
    chmodSync(path, 0o644);
    await (await SqliteDatabase.open(path, { readonly: true })).close();
    expect(mode(path)).toBe(0o644); // doctor reads without changing what it reports
    chmodSync(path, 0o400);
    await (await SqliteDatabase.open(path, { readonly: true })).close();
    expect(mode(path)).toBe(0o400);
  });

  it('makes a data folder 0700 with its missing parents, and tightens an existing one only when asked', () => {
    const root = mkdtempSync(join(tmpdir(), 'modes-'));
    expect(makePrivateDir(join(root, 'p', 'q'))).toBe(true);
    expect([mode(join(root, 'p')), mode(join(root, 'p', 'q'))]).toEqual([0o700, 0o700]);
    const shared = join(root, 'shared');
    mkdirSync(shared, { mode: 0o755 });
    expect(makePrivateDir(shared)).toBe(false);
    expect(mode(shared)).toBe(0o755);
    makePrivateDir(shared, { tighten: true });
    expect(mode(shared)).toBe(0o700);
    expect(checkFileModes(join(root, 'missing'))).toMatchObject({ status: 'warn' });
  });
});
