import { describe, expect, it } from 'vitest';
import { authenticator, signed } from './signed-requests.fixture.js';

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
