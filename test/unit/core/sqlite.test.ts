import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../../src/core/sqlite.js';

function tmp(): string {
  return join(mkdtempSync(join(tmpdir(), 'sqlite-')), 'x.db');
}

describe('SqliteDatabase', () => {
  it('opens in WAL with synchronous=FULL and answers the same cached get twice', async () => {
    const db = await SqliteDatabase.open(tmp());
    expect((await db.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode).toBe('wal');
    expect((await db.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous).toBe(2);
    await db.exec('CREATE TABLE t (v INTEGER)');
    await db.transaction(async (d) => {
      await d.run('INSERT INTO t VALUES (?)', [1]);
      await d.run('INSERT INTO t VALUES (?)', [2]);
    });
    expect(await db.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 2 });
    expect(await db.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 2 });
    await db.close();
  });

  it('a non-durable transaction commits without waiting for the disk, and the next one is durable again', async () => {
    const db = await SqliteDatabase.open(tmp());
    await db.exec('CREATE TABLE t (v INTEGER)');
    const inside = await db.transaction(
      async (d) => {
        await d.run('INSERT INTO t VALUES (1)');
        return (await d.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous;
      },
      { durable: false },
    );
    expect(inside).toBe(1); // NORMAL: no fsync at this commit
    expect((await db.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous).toBe(2);
    await expect(
      db.transaction(
        async () => {
          throw new Error('undone');
        },
        { durable: false },
      ),
    ).rejects.toThrow('undone');
    expect((await db.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous).toBe(2);
    expect(await db.transaction(async (d) => (await d.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous)).toBe(2);
    expect(await db.all('SELECT v FROM t')).toEqual([{ v: 1 }]);
    await db.close();
  });

  it('rolls back a failed transaction and keeps serving', async () => {
    const db = await SqliteDatabase.open(tmp());
    await db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    await expect(
      db.transaction(async (d) => {
        await d.run('INSERT INTO t VALUES (1)');
        await d.run('INSERT INTO t VALUES (1)');
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT' });
    expect(await db.all('SELECT * FROM t')).toEqual([]);
    await db.transaction((d) => d.run('INSERT INTO t VALUES (5)'));
    expect(await db.all('SELECT v FROM t')).toEqual([{ v: 5 }]);
    await db.close();
  });

  it('applies migrations per component once', async () => {
    const path = tmp();
    const db = await SqliteDatabase.open(path);
    const m = [
      { version: 1, description: 'a', up: 'CREATE TABLE a (x)' },
      { version: 2, description: 'b', up: 'CREATE TABLE b (x)' },
    ];
    expect(await db.migrate('one', m)).toBe(2);
    expect(await db.migrate('one', m)).toBe(2);
    expect(await db.migrate('two', [{ version: 1, description: 'c', up: 'CREATE TABLE c (x)' }])).toBe(1);
    expect(await db.integrityCheck()).toEqual(['ok']);
    await db.close();
  });

  it('refuses a database a newer version migrated further, before touching it', async () => {
    const path = tmp();
    const newer = await SqliteDatabase.open(path);
    const m = [
      { version: 1, description: 'a', up: 'CREATE TABLE a (x)' },
      { version: 2, description: 'b', up: 'ALTER TABLE a ADD COLUMN y' },
    ];
    await newer.migrate('one', m);
    await newer.transaction((d) => d.run('INSERT INTO a VALUES (1, 2)'));
    await newer.close();

    const older = await SqliteDatabase.open(path);
    const err = await older.migrate('one', m.slice(0, 1)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORE_SCHEMA_TOO_NEW', context: { component: 'one', version: 2, known: 1 } });
    expect((err as { hint: string }).hint).toContain('edge-agent rollback');
    // Other components and the data are untouched; the newer schema still opens.
    expect(await older.migrate('two', [{ version: 1, description: 'c', up: 'CREATE TABLE c (x)' }])).toBe(1);
    expect(await older.all('SELECT x, y FROM a')).toEqual([{ x: 1, y: 2 }]);
    expect(await older.migrate('one', m)).toBe(2);
    await older.close();
  });

  it('names a file that is not a database', async () => {
    const path = tmp();
    writeFileSync(path, 'this is not sqlite at all, not even close'.repeat(100));
    await expect(SqliteDatabase.open(path)).rejects.toMatchObject({ code: 'SQLITE_CORRUPT' });
  });
});
