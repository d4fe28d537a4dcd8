import { describe, expect, it } from 'vitest';
import { CommandRouter, parseRequest } from '../../../src/ops/commands.js';
import { AgentError } from '../../../src/core/errors.js';
import { decodeTopicPart, encodeTopicPart, parseTerminalTopic } from '../../../src/ops/topics.js';
import { isNewer } from '../../../src/site-sync/site-sync.js';
import { openSiteRecord, sealSiteRecord } from '../../../src/site-sync/site-crypto.js';
import { randomBytes } from 'node:crypto';

describe('command router', () => {
  const router = new CommandRouter()
    .register('ping', () => ({ pong: true }))
    .register('fail', () => {
      throw new AgentError('OPS_COMMAND_FAILED', 'it broke', {}, { hint: 'fix it' });
    });

  it('echoes the transaction with ok and the result', async () => {
    const r = await router.handle('ping', Buffer.from('{"transaction":"t-1"}'));
    expect(r).toMatchObject({ transaction: 't-1', status: 'ok', result: { pong: true } });
  });
  it('answers an unknown command with an error naming the known ones', async () => {
    const r = await router.handle('nope', Buffer.from('{"transaction":"t-2"}'));
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
    const r = await router.handle('fail', Buffer.from('{"transaction":9}'));
    expect(r).toMatchObject({ status: 'error', transaction: '9', error: { code: 'OPS_COMMAND_FAILED', hint: 'fix it' } });
  });
  it('parses arguments beside the transaction', () => {
    expect(parseRequest(Buffer.from('{"transaction":"a","level":"debug"}'))).toEqual({ transaction: 'a', args: { level: 'debug' } });
    expect(parseRequest(Buffer.from(''))).toEqual({ transaction: null, args: {} });
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
  it('orders records by updatedAt, then origin', () => {
    expect(isNewer({ updatedAt: '2026-01-02T00:00:00.000Z', origin: 'a' }, { updatedAt: '2026-01-01T00:00:00.000Z', origin: 'z' })).toBe(true);
    expect(isNewer({ updatedAt: '2026-01-01T00:00:00.000Z', origin: 'b' }, { updatedAt: '2026-01-01T00:00:00.000Z', origin: 'a' })).toBe(true);
    expect(isNewer({ updatedAt: '2026-01-01T00:00:00.000Z', origin: 'a' }, { updatedAt: '2026-01-01T00:00:00.000Z', origin: 'a' })).toBe(false);
    expect(isNewer({ updatedAt: '2026-01-01T00:00:00.000Z', origin: 'a' }, null)).toBe(true);
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
  const router = createOpsRouter({
    terminal: 't1',
    info: async () => ({ version: 'x' }),
    queueStatus: async () => ({ pending: 4 }),
    retryDead: async (ids) => (calls.push(`retry:${ids?.join(',') ?? 'all'}`), ids?.length ?? 7),
    syncTemplates: async () => ({ resubscribed: true }),
    reloadConfig: async () => ({ configVersion: 3 }),
    deleteUser: async (code) => (calls.push(`delete:${code}`), { templatesRemoved: 2 }),
    restart: () => calls.push('restart'),
  });
  const ask = async (cmd: string, body: Record<string, unknown> = {}) => router.handle(cmd, Buffer.from(JSON.stringify({ transaction: 'x', ...body })));

  it('answers every command of the list', async () => {
    expect(router.commands).toEqual(['delete-user', 'info', 'ping', 'queue-status', 'reload-config', 'restart', 'retry-dead', 'set-log-level', 'sync-templates']);
    expect((await ask('ping')).result).toMatchObject({ pong: true, terminal: 't1' });
    expect((await ask('queue-status')).result).toEqual({ pending: 4 });
    expect((await ask('retry-dead')).result).toEqual({ retried: 7 });
    expect((await ask('retry-dead', { ids: ['a', 'b'] })).result).toEqual({ retried: 2 });
    expect((await ask('delete-user', { employeeCode: 'E9' })).result).toEqual({ templatesRemoved: 2 });
    expect(calls).toContain('delete:E9');
  });
  it('validates arguments', async () => {
    expect((await ask('delete-user')).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('retry-dead', { ids: 'a' })).error?.code).toBe('OPS_BAD_ARGUMENT');
    expect((await ask('set-log-level', { level: 'loud' })).error?.code).toBe('OPS_BAD_ARGUMENT');
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
