/**
 * Replays across restarts: the authenticator over the terminal's real database (a SQLite file),
 * "restarted" by opening the file again; the clock is the test's.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { CommandRouter } from '../../../src/ops/commands.js';
import { keyringOf, OpsAuthenticator, type ReplayLedger, signCommand } from '../../../src/ops/ops-auth.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { ReplayStore } from '../../../src/store/replay-store.js';

const KEY = randomBytes(32);
const BASE = { site: 's1', terminal: 't1' };
const WINDOW = 300_000;
const T0 = 1_800_000_000_000;

const open: SqliteDatabase[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close().catch(() => undefined);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ops-auth-'));
  dirs.push(dir);
  return dir;
}

/** The authenticator a terminal starts with on `dir`'s database (a start, or a restart). */
async function start(dir: string, clock: { t: number }): Promise<OpsAuthenticator> {
  const db = await openAgentDatabase(dir);
  open.push(db);
  return OpsAuthenticator.open({
    ...BASE,
    keyring: keyringOf({ opsKey: KEY, opsKeys: {} }),
    windowMs: WINDOW,
    now: () => clock.t,
    ledger: await ReplayStore.open(db),
  });
}

async function stop(): Promise<void> {
  for (const db of open.splice(0)) await db.close();
}

function request(command: string, transaction: string, ts: number) {
  return { command, transaction, args: {}, auth: signCommand(KEY, { ...BASE, command, transaction, ts, kid: 'site', args: {} }) };
}

describe('replays across restarts', () => {
  it('refuses a captured restart after the terminal restarted, inside the window', async () => {
    const dir = dataDir();
    const clock = { t: T0 };
    const captured = request('restart', 'r-1', T0);
    expect(await (await start(dir, clock)).verify(captured)).toBe('site');
    await stop();
    clock.t += 1000;
    const after = await start(dir, clock);
    await expect(after.verify(captured)).rejects.toMatchObject({ code: 'OPS_UNAUTHENTICATED', message: expect.stringContaining('replay') });
    // Another command signed now is accepted as usual.
    expect(await after.verify(request('restart', 'r-2', clock.t))).toBe('site');
  });

  it('refuses a forgotten command after the clock stepped back, before and after a restart; a command signed after it passes', async () => {
    const dir = dataDir();
    const clock = { t: T0 };
    const old = request('restart', 'r-old', T0);
    const first = await start(dir, clock);
    await first.verify(old);
    clock.t = T0 + WINDOW + 60_000; // the window moved on: r-old is forgotten, its time is the key's floor
    await first.verify(request('ping', 'p-1', clock.t));
    expect(first.remembered).toBe(1);
    expect(first.floor('site')).toBe(T0);
    clock.t = T0 + 10_000; // a step back: r-old is inside the window again
    await expect(first.verify(old)).rejects.toMatchObject({ code: 'OPS_UNAUTHENTICATED', message: expect.stringContaining('forgotten') });
    await stop();
    const second = await start(dir, clock);
    expect(second.floor('site')).toBe(T0);
    await expect(second.verify(old)).rejects.toMatchObject({ code: 'OPS_UNAUTHENTICATED', message: expect.stringContaining('forgotten') });
    expect(await second.verify(request('ping', 'p-2', T0 + 10_000))).toBe('site');
  });

  it('accepts the same request delivered twice at once only once', async () => {
    const dir = dataDir();
    const auth = await start(dir, { t: T0 });
    const req = request('restart', 'twice', T0);
    const results = await Promise.allSettled([auth.verify(req), auth.verify(req)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('runs nothing it could not record: OPS_REPLAY_UNRECORDED, and the transaction stays used', async () => {
    const broken: ReplayLedger = {
      load: async () => ({ accepted: [], floors: {} }),
      record: async () => {
        throw new Error('SQLITE_FULL: database or disk is full');
      },
    };
    const clock = { t: T0 };
    const auth = await OpsAuthenticator.open({
      ...BASE,
      keyring: keyringOf({ opsKey: KEY, opsKeys: {} }),
      windowMs: WINDOW,
      now: () => clock.t,
      ledger: broken,
    });
    const ran: string[] = [];
    const router = new CommandRouter(auth).register('restart', () => {
      ran.push('restart');
      return { restarting: true };
    });
    const req = request('restart', 'unrecorded', T0);
    const payload = Buffer.from(JSON.stringify({ transaction: req.transaction, auth: req.auth }));
    expect(await router.handle('restart', payload)).toMatchObject({
      status: 'error',
      error: { code: 'OPS_REPLAY_UNRECORDED', hint: expect.stringContaining('new transaction id') },
    });
    expect((await router.handle('restart', payload)).error?.code).toBe('OPS_UNAUTHENTICATED');
    expect(ran).toEqual([]);
  });
});
