import { describe, expect, it } from 'vitest';
import { CommandRouter, MAX_REQUEST_BYTES, parseRequest } from '../../../src/ops/commands.js';
import { canonicalJson, keyringOf, OpsAuthenticator, signCommand } from '../../../src/ops/ops-auth.js';
import { AgentError } from '../../../src/core/errors.js';
import { decodeTopicPart, encodeTopicPart, parseTerminalTopic } from '../../../src/ops/topics.js';
import { judgeRecord, nextVersion, parseRecord } from '../../../src/site-sync/site-sync.js';
import { openSiteRecord, sealSiteRecord } from '../../../src/site-sync/site-crypto.js';
import { randomBytes } from 'node:crypto';

const KEY = randomBytes(32);
const BASE = { site: 's1', terminal: 't1' };

/** A router's verifier holding KEY as the site's ops key, with a clock the test moves. */
function authenticator(now: { t: number }, maxRemembered?: number) {
  return new OpsAuthenticator({
    ...BASE,
    keyring: keyringOf({ opsKey: KEY, opsKeys: {} }),
    windowMs: 300_000,
    now: () => now.t,
    ...(maxRemembered ? { maxRemembered } : {}),
  });
}

/** A request payload signed with `key` (KEY by default) for terminal t1 of site s1. */
function signed(
  command: string,
  transaction: string,
  args: Record<string, unknown> = {},
  o: { key?: Buffer; kid?: string; ts?: number; terminal?: string } = {},
): Buffer {
  const auth = signCommand(o.key ?? KEY, {
    ...BASE,
    terminal: o.terminal ?? BASE.terminal,
    command,
    transaction,
    ts: o.ts ?? Date.now(),
    kid: o.kid ?? 'site',
    args,
  });
  return Buffer.from(JSON.stringify({ transaction, ...args, auth }));
}

describe('command router', () => {
  const clock = { t: Date.now() };
  const router = new CommandRouter(authenticator(clock))
    .register('ping', () => ({ pong: true }))
    .register('fail', () => {
      throw new AgentError('OPS_COMMAND_FAILED', 'it broke', {}, { hint: 'fix it' });
    });

  it('echoes the transaction with ok and the result', async () => {
    const r = await router.handle('ping', signed('ping', 't-1'));
    expect(r).toMatchObject({ transaction: 't-1', status: 'ok', result: { pong: true } });
  });
  it('answers an unknown command with an error naming the known ones', async () => {
    const r = await router.handle('nope', signed('nope', 't-2'));
    expect(r.status).toBe('error');
    expect(r.transaction).toBe('t-2');
    expect(r.error?.code).toBe('OPS_UNKNOWN_COMMAND');
    expect(r.error?.hint).toContain('ping');
  });
  it('answers a malformed payload with an error and salvages the transaction', async () => {
    const r = await router.handle('ping', Buffer.from('{"transaction":"t-3", oops'));
    expect(r).toMatchObject({ status: 'error', transaction: 't-3', error: { code: 'OPS_BAD_REQUEST' } });
    const r2 = await router.handle('ping', Buffer.from('[1,2]'));
    expect(r2.error?.code).toBe('OPS_BAD_REQUEST');
  });
  it('turns a throwing handler into an error response', async () => {
    const r = await router.handle('fail', signed('fail', '9'));
    expect(r).toMatchObject({ status: 'error', transaction: '9', error: { code: 'OPS_COMMAND_FAILED', hint: 'fix it' } });
  });
  it('parses arguments beside the transaction and the signature', () => {
    expect(parseRequest(Buffer.from('{"transaction":"a","level":"debug","auth":{"kid":"site"}}'))).toEqual({
      transaction: 'a',
      auth: { kid: 'site' },
      args: { level: 'debug' },
    });
    expect(parseRequest(Buffer.from(''))).toEqual({ transaction: null, auth: undefined, args: {} });
  });
  it('reads no request over 64 KiB and echoes no transaction over 128 characters', async () => {
    const big = await router.handle(
      'ping',
      Buffer.concat([Buffer.from('{"transaction":"t-big","pad":"'), Buffer.alloc(MAX_REQUEST_BYTES, 0x61), Buffer.from('"}')]),
    );
    expect(big).toMatchObject({
      status: 'error',
      transaction: 't-big',
      error: { code: 'OPS_BAD_REQUEST', message: expect.stringContaining('at most 65536') },
    });
    const long = await router.handle('ping', Buffer.from(JSON.stringify({ transaction: 'x'.repeat(129) })));
    expect(long).toMatchObject({ status: 'error', transaction: null, error: { code: 'OPS_BAD_REQUEST' } });
  });
  it('answers a 70,000-character command name briefly', async () => {
    const name = 'x'.repeat(70_000);
    const r = await router.handle(name, signed(name, 't-long'));
    expect(r.error?.code).toBe('OPS_UNKNOWN_COMMAND');
    expect(JSON.stringify(r).length).toBeLessThan(2000);
  });
});

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

describe('topics', () => {
  it('round-trips reserved characters in employee codes', () => {
    for (const code of ['E/1', 'a+b', '#7', '100%']) expect(decodeTopicPart(encodeTopicPart(code))).toBe(code);
    expect(encodeTopicPart('E/1')).not.toContain('/');
  });
  it('parses terminal topics and ignores the site template topics', () => {
    expect(parseTerminalTopic('att', 'att/s1/t1/state')).toEqual({ site: 's1', terminal: 't1', leaf: 'state' });
    expect(parseTerminalTopic('att', 'att/s1/templates/E1')).toBeNull();
    expect(parseTerminalTopic('att', 'other/s1/t1/state')).toBeNull();
  });
});

describe('site sync rules', () => {
  it('applies only a higher version; the same version is a repeat with the same content and refused with other content', () => {
    expect(judgeRecord(5, 'aa', null)).toBe('apply');
    expect(judgeRecord(6, 'bb', { version: 5, deleted: true, digest: 'aa' })).toBe('apply');
    expect(judgeRecord(5, 'aa', { version: 5, deleted: false, digest: 'aa' })).toBe('same');
    expect(judgeRecord(5, 'bb', { version: 5, deleted: false, digest: 'aa' })).toBe('conflict');
    expect(judgeRecord(5, 'bb', { version: 5, deleted: false, digest: null })).toBe('same');
    expect(judgeRecord(4, 'aa', { version: 5, deleted: true, digest: 'aa' })).toBe('older');
    expect(nextVersion({ version: 9_000_000_000_000, deleted: true, digest: null }, 1_000)).toBe(9_000_000_000_001);
    expect(nextVersion(null, 1_000)).toBe(1_000);
  });
  it('validates records: v2 and tombstones, v1 read as versioned by updatedAt, anything else malformed', () => {
    const t = {
      id: 'x',
      modality: 'finger',
      position: 'right-index',
      format: 'iso19794-2',
      quality: 50,
      sensorModel: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      data: 'AAEC',
    };
    const v2 = {
      v: 2,
      employeeCode: 'E1',
      version: 7,
      updatedAt: '2026-01-01T00:00:00.000Z',
      origin: 'gate-1',
      deleted: false,
      templates: [t],
    };
    expect(parseRecord(Buffer.from(JSON.stringify(v2)), 'E1')).toMatchObject({ version: 7, deleted: false });
    const v1 = { v: 1, employeeCode: 'E1', updatedAt: '2026-01-01T00:00:00.000Z', origin: 'gate-1', templates: [t] };
    expect(parseRecord(Buffer.from(JSON.stringify(v1)), 'E1')).toMatchObject({ v: 2, version: Date.parse(v1.updatedAt), deleted: false });
    const bad =
      (r: unknown, code = 'E1') =>
      () =>
        parseRecord(Buffer.from(JSON.stringify(r)), code);
    expect(bad(v2, 'E2')).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, deleted: true })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, version: 0 })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, templates: [{ ...t, format: 'exe' }] })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, templates: Array.from({ length: 257 }, () => t) })).toThrow(
      expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }),
    );
    expect(bad({ ...v2, origin: 'a/b' })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(() => parseRecord(Buffer.from('nope'), 'E1')).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
  });
  it('seals records so they open only under the same key and topic', () => {
    const key = randomBytes(32);
    const sealed = sealSiteRecord(key, 's1', 'E1', Buffer.from('secret template'));
    expect(sealed.toString()).not.toContain('secret template');
    expect(openSiteRecord(key, 's1', 'E1', sealed).toString()).toBe('secret template');
    expect(() => openSiteRecord(key, 's1', 'E2', sealed)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_TAMPERED' }));
    expect(() => openSiteRecord(randomBytes(32), 's1', 'E1', sealed)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_WRONG_KEY' }));
    expect(() => openSiteRecord(key, 's1', 'E1', Buffer.from('nope'))).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
  });
});

describe('ops router', async () => {
  const { createOpsRouter } = await import('../../../src/ops/ops-router.js');
  const calls: string[] = [];
  const clock = { t: Date.now() };
  const router = createOpsRouter(
    {
      terminal: 't1',
      info: async () => ({ version: 'x' }),
      queueStatus: async () => ({ pending: 4 }),
      queueList: async (o) => {
        calls.push(`list:${o.dead}:${o.limit}`);
        return [{ id: 'E1', employeeCode: 'X' }];
      },
      retryDead: async (ids) => {
        calls.push(`retry:${ids?.join(',') ?? 'all'}`);
        return ids?.length ?? 7;
      },
      syncTemplates: async () => ({ resubscribed: true }),
      reloadConfig: async () => ({ configVersion: 3 }),
      deleteUser: async (code) => {
        calls.push(`delete:${code}`);
        return { templatesRemoved: 2 };
      },
      restart: () => calls.push('restart'),
    },
    authenticator(clock),
  );
  let n = 0;
  const ask = async (cmd: string, body: Record<string, unknown> = {}) => router.handle(cmd, signed(cmd, `x-${++n}`, body));

  it('answers every command of the list', async () => {
    expect(router.commands).toEqual([
      'delete-user',
      'info',
      'ping',
      'queue-list',
      'queue-status',
      'reload-config',
      'restart',
      'retry-dead',
      'set-log-level',
      'sync-templates',
    ]);
    expect((await ask('ping')).result).toMatchObject({ pong: true, terminal: 't1' });
    expect((await ask('queue-status')).result).toEqual({ pending: 4 });
    expect((await ask('retry-dead')).result).toEqual({ retried: 7 });
    expect((await ask('queue-list')).result).toEqual({ dead: true, limit: 50, count: 1, events: [{ id: 'E1', employeeCode: 'X' }] });
    expect((await ask('queue-list', { dead: false, limit: 5 })).result).toMatchObject({ dead: false, limit: 5 });
    expect(calls).toEqual(expect.arrayContaining(['list:true:50', 'list:false:5']));
    expect((await ask('retry-dead', { ids: ['a', 'b'] })).result).toEqual({ retried: 2 });
    expect((await ask('delete-user', { employeeCode: 'E9' })).result).toEqual({ templatesRemoved: 2 });
    expect(calls).toContain('delete:E9');
  });
  it('validates arguments', async () => {
    expect((await ask('delete-user')).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('retry-dead', { ids: 'a' })).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('queue-list', { limit: 201 })).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('queue-list', { dead: 'yes' })).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('set-log-level', { level: 'loud' })).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('ping', { extra: 1 })).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('retry-dead', { ids: ['x'.repeat(65)] })).error?.code).toBe('OPS_BAD_ARGUMENT');
    for (const employeeCode of [
      'x'.repeat(70_000),
      'x'.repeat(65),
      '\ud800',
      '.',
      '..',
      'E\u202e1',
      'E\u200b1',
      'E 1',
      'E/1',
      'Ｅ９',
      42,
    ]) {
      const r = await ask('delete-user', { employeeCode });
      // 70,000 characters do not even get read: the request is over 64 KiB.
      expect(r.error?.code).toBe(typeof employeeCode === 'string' && employeeCode.length > 1000 ? 'OPS_BAD_REQUEST' : 'OPS_BAD_ARGUMENT');
      expect(JSON.stringify(r).length).toBeLessThan(2000);
    }
    expect(calls.filter((c) => c.startsWith('delete:'))).toEqual(['delete:E9']);
  });
  it('hands delete-user the code in Unicode NFC', async () => {
    expect((await ask('delete-user', { employeeCode: 'Jose\u0301' })).status).toBe('ok');
    expect(calls).toContain('delete:Jos\u00e9');
  });
  it('changes a module log level at run time', async () => {
    const { logger } = await import('../../../src/core/logger.js');
    const l = logger('upload:api-test');
    const r = await ask('set-log-level', { module: 'upload:*', level: 'trace' });
    expect(r.status).toBe('ok');
    expect(l.level).toBe('trace');
  });
  it('restarts only after answering', async () => {
    const r = await ask('restart');
    expect(r.result).toMatchObject({ restarting: true });
    expect(calls).not.toContain('restart');
    await new Promise((res) => setTimeout(res, 400));
    expect(calls).toContain('restart');
  });
});
