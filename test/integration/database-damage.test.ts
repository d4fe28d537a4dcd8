/**
 * Damage is never silent: a page broken inside an index that `queue status` never reads made it
 * print inconsistent counts and exit 0, while `run` and `doctor` saw the damage. Every command that
 * opens the terminal's database now checks it (bounded) and fails with STORE_DATABASE_CORRUPT and
 * the same hint. Real files, real SQLite, the real CLI.
 */
import { mkdtempSync, openSync, closeSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/error-codes.js';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { Outbox, type PunchInput } from '../../src/store/outbox.js';
import { runCli } from '../helpers/cli.js';

const punch = (i: number): PunchInput => ({
  employeeCode: `E${i % 50}`,
  direction: i % 2 ? 'out' : 'in',
  localTime: '2026-03-01 08:00:00',
  tzOffset: 60,
  source: 'manual',
  terminalId: 't1',
});

/** A data folder with 3000 punches, its WAL checkpointed into agent.db. */
async function terminalData(): Promise<{ dir: string; secretFile: string; args: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'damage-'));
  const db = await openAgentDatabase(dir);
  await (await Outbox.open(db)).recordMany(Array.from({ length: 3000 }, (_, i) => punch(i)));
  await db.close();
  const secretFile = join(dir, 'api-secret');
  writeFileSync(secretFile, 'secret\n', { mode: 0o600 });
  return {
    dir,
    secretFile,
    args: ['--data', dir, '--terminal', 't1', '--api', 'http://127.0.0.1:9', '--api-key', 'k', '--api-secret-file', secretFile],
  };
}

/** Overwrites 512 bytes inside the first leaf page of `index` (found with dbstat). */
async function breakPageOf(dir: string, index: string): Promise<number> {
  const path = join(dir, 'agent.db');
  const db = await SqliteDatabase.open(path, { readonly: true });
  const row = await db.get<{ pageno: number }>("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1", [
    index,
  ]);
  const pageSize = (await db.get<{ page_size: number }>('PRAGMA page_size'))!.page_size;
  await db.close();
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, (row!.pageno - 1) * pageSize + 8);
  closeSync(fd);
  return row!.pageno;
}

describe('a damaged terminal database', () => {
  it('queue status, punch and run all fail with STORE_DATABASE_CORRUPT and the same hint', async () => {
    const { dir, args } = await terminalData();
    await breakPageOf(dir, 'outbox_events_state'); // an index queue status's counts never read
    const hint = ERROR_CODES.STORE_DATABASE_CORRUPT.hint;
    const runs = [
      ['queue', 'status', ...args],
      ['queue', 'status', '--json', ...args],
      ['queue', 'list', ...args],
      ['punch', '--code', 'E1', '--in', '--at', '2026-03-02 08:00:00', ...args],
      ['run', '--simulate', ...args],
    ];
    for (const argv of runs) {
      const r = await runCli(argv, { timeoutMs: 60_000 });
      expect(r.code, `edge-agent ${argv.slice(0, 2).join(' ')}: ${r.stdout}`).toBe(1);
      expect(r.stderr).toContain(`STORE_DATABASE_CORRUPT: the terminal's database ${join(dir, 'agent.db')} is damaged`);
      expect(r.stderr).toContain(hint);
      expect(r.stdout).not.toMatch(/pending/);
    }
  }, 180_000);

  it('is found from the header alone when the file was cut short, and an intact database opens', async () => {
    const { dir } = await terminalData();
    const ok = await openAgentDatabase(dir);
    expect(await ok.get('SELECT COUNT(*) AS n FROM outbox_events')).toEqual({ n: 3000 });
    await ok.close();
    truncateSync(join(dir, 'agent.db'), 40 * 4096);
    await expect(openAgentDatabase(dir)).rejects.toMatchObject({
      code: 'STORE_DATABASE_CORRUPT',
      message: expect.stringContaining('cut short'),
    });
    writeFileSync(join(dir, 'agent.db'), Buffer.alloc(8192, 0x5a));
    await expect(openAgentDatabase(dir)).rejects.toMatchObject({
      code: 'STORE_DATABASE_CORRUPT',
      message: expect.stringContaining('not an SQLite database'),
    });
  });

  it('finds damage in any b-tree on open, naming the page', async () => {
    const { dir } = await terminalData();
    const page = await breakPageOf(dir, 'outbox_events_employee');
    await expect(openAgentDatabase(dir)).rejects.toMatchObject({
      code: 'STORE_DATABASE_CORRUPT',
      message: expect.stringContaining(`page ${page}`),
    });
  });
});
