import { describe, expect, it } from 'vitest';
import { CommandRouter } from '../../../src/ops/commands.js';
import { canonicalJson, keyringOf, OpsAuthenticator, signCommand } from '../../../src/ops/ops-auth.js';
import { randomBytes } from 'node:crypto';
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
    v.verify({ command: 'ping', transaction: 'r4', args: {}, auth: signCommand(KEY, fields) });
    expect(v.remembered).toBe(1);
    clock.t += 301_000; // the id is forgotten once its timestamp left the window: the old request is refused by its time
    expect(() => v.verify({ command: 'ping', transaction: 'r4', args: {}, auth: signCommand(KEY, fields) })).toThrow(
      expect.objectContaining({ code: 'OPS_UNAUTHENTICATED' }),
    );
    expect(v.remembered).toBe(0);
  });
  it('remembers a bounded number of transaction ids', () => {
    const now = { t: Date.now() };
    const v = authenticator(now, 3);
    const verify = (tx: string) =>
      v.verify({
        command: 'ping',
        transaction: tx,
        args: {},
        auth: signCommand(KEY, { ...BASE, command: 'ping', transaction: tx, ts: now.t, kid: 'site', args: {} }),
      });
    for (const tx of ['a', 'b', 'c']) verify(tx);
    expect(() => verify('d')).toThrow(expect.objectContaining({ code: 'OPS_UNAUTHENTICATED' }));
    expect(v.remembered).toBe(3);
  });
  it('accepts an operator key by its id, and nothing when the terminal holds no key', async () => {
    const alice = randomBytes(32);
    const v = new OpsAuthenticator({ ...BASE, keyring: keyringOf({ opsKey: null, opsKeys: { alice } }), windowMs: 60_000 });
    const auth = signCommand(alice, { ...BASE, command: 'ping', transaction: 'k1', ts: Date.now(), kid: 'alice', args: {} });
    expect(v.verify({ command: 'ping', transaction: 'k1', args: {}, auth })).toBe('alice');
    const none = new OpsAuthenticator({ ...BASE, keyring: keyringOf({ opsKey: null, opsKeys: {} }), windowMs: 60_000 });
    expect(() => none.verify({ command: 'ping', transaction: 'k2', args: {}, auth: { ...auth } })).toThrow(
      expect.objectContaining({ code: 'OPS_UNAUTHENTICATED', message: expect.stringContaining('holds no ops key') }),
    );
  });
  it('signs the canonical JSON of the arguments (key order does not matter)', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 'x' }], a: null })).toBe('{"a":null,"b":[2,{"c":"x","d":1}]}');
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(expect.objectContaining({ code: 'OPS_BAD_REQUEST' }));
  });
});
