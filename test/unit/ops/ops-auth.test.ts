/**
 * Signed commands: signatures, the window, replays; and replays across restarts, with the
 * authenticator over the terminal's real database (a SQLite file) "restarted" by opening the file
 * again, on the test's clock.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { CommandRouter } from '../../../src/ops/commands.js';
import { canonicalJson, keyringOf, OpsAuthenticator, type ReplayLedger, signCommand } from '../../../src/ops/ops-auth.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { ReplayStore } from '../../../src/store/replay-store.js';
import { BASE, KEY, authenticator, signed } from './signed-requests.fixture.js';

describe('authenticated commands', () => {
  const clock = { t: Date.now() };
  const ran: string[] = [];
  const router = new CommandRouter(authenticator(clock)).register('ping', () => {
    ran.push('ping');
    return { pong: true };
  });
  const code = async (payload: Buffer) => (await router.handle('ping', payload)).error?.code ?? 'ok';

  it('runs nothing without a valid signature: none, malformed, another key, key id, terminal, command or arguments', async () => {
    expect(await code(Buffer.from('{"transaction":"u1"}'))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(Buffer.from(''))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(Buffer.from('{"transaction":"u2","auth":{"kid":"site","ts":1,"mac":"short"}}'))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(signed('ping', 'u3', {}, { key: randomBytes(32) }))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(signed('ping', 'u4', {}, { kid: 'alice' }))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(signed('ping', 'u5', {}, { terminal: 't2' }))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(signed('restart', 'u6'))).toBe('OPS_UNAUTHENTICATED');
    const tampered = JSON.parse(signed('ping', 'u7', { level: 'a' }).toString()) as Record<string, unknown>;
    tampered.level = 'b';
    expect(await code(Buffer.from(JSON.stringify(tampered)))).toBe('OPS_UNAUTHENTICATED');
    const noTx = JSON.parse(signed('ping', 'u8').toString()) as Record<string, unknown>;
    delete noTx.transaction;
    expect(await code(Buffer.from(JSON.stringify(noTx)))).toBe('OPS_UNAUTHENTICATED');
    expect(ran).toEqual([]);
    expect(await code(signed('ping', 'u9'))).toBe('ok');
    expect(ran).toEqual(['ping']);
  });
  it('refuses a replayed transaction and a timestamp outside the window, and forgets ids once their window passed', async () => {
    const first = signed('ping', 'r1', {}, { ts: clock.t });
    expect(await code(first)).toBe('ok');
    const replay = await router.handle('ping', first);
    expect(replay.error).toMatchObject({ code: 'OPS_UNAUTHENTICATED', message: expect.stringContaining('replay') });
    expect(await code(signed('ping', 'r2', {}, { ts: clock.t - 301_000 }))).toBe('OPS_UNAUTHENTICATED');
    expect(await code(signed('ping', 'r3', {}, { ts: clock.t + 301_000 }))).toBe('OPS_UNAUTHENTICATED');
    const v = authenticator(clock);
    const fields = { ...BASE, command: 'ping', transaction: 'r4', ts: clock.t, kid: 'site', args: {} };
    await v.verify({ command: 'ping', transaction: 'r4', args: {}, auth: signCommand(KEY, fields) });
    expect(v.remembered).toBe(1);
    clock.t += 301_000; // the id is forgotten once its timestamp left the window: the old request is refused by its time
    await expect(v.verify({ command: 'ping', transaction: 'r4', args: {}, auth: signCommand(KEY, fields) })).rejects.toMatchObject({
      code: 'OPS_UNAUTHENTICATED',
    });
    expect(v.remembered).toBe(0);
  });
  it('remembers a bounded number of transaction ids', async () => {
    const now = { t: Date.now() };
    const v = authenticator(now, 3);
    const verify = (tx: string) =>
      v.verify({
        command: 'ping',
        transaction: tx,
        args: {},
        auth: signCommand(KEY, { ...BASE, command: 'ping', transaction: tx, ts: now.t, kid: 'site', args: {} }),
      });
    for (const tx of ['a', 'b', 'c']) await verify(tx);
    await expect(verify('d')).rejects.toMatchObject({ code: 'OPS_UNAUTHENTICATED' });
    expect(v.remembered).toBe(3);
  });
  it('accepts an operator key by its id, and nothing when the terminal holds no key', async () => {
    const alice = randomBytes(32);
    const v = new OpsAuthenticator({ ...BASE, keyring: keyringOf({ opsKey: null, opsKeys: { alice } }), windowMs: 60_000 });
    const auth = signCommand(alice, { ...BASE, command: 'ping', transaction: 'k1', ts: Date.now(), kid: 'alice', args: {} });
    expect(await v.verify({ command: 'ping', transaction: 'k1', args: {}, auth })).toBe('alice');
    const none = new OpsAuthenticator({ ...BASE, keyring: keyringOf({ opsKey: null, opsKeys: {} }), windowMs: 60_000 });
    await expect(none.verify({ command: 'ping', transaction: 'k2', args: {}, auth: { ...auth } })).rejects.toMatchObject({
      code: 'OPS_UNAUTHENTICATED',
      message: expect.stringContaining('holds no ops key'),
    });
  });
  it('signs the canonical JSON of the arguments (key order does not matter)', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 'x' }], a: null })).toBe('{"a":null,"b":[2,{"c":"x","d":1}]}');
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(expect.objectContaining({ code: 'OPS_BAD_REQUEST' }));
  });
});

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
