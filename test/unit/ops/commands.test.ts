import { describe, expect, it } from 'vitest';
import { CommandRouter, MAX_REQUEST_BYTES, parseRequest } from '../../../src/ops/commands.js';
import { AgentError } from '../../../src/core/errors.js';
import { authenticator, signed } from './signed-requests.fixture.js';

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
