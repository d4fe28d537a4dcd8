import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { AgentError, ERROR_CODES, describeError, isAgentError, isErrorCode, toAgentError } from '../../../src/core/errors.js';
import { backoffCeiling, backoffDelay } from '../../../src/core/backoff.js';
import { sleep, withTimeout } from '../../../src/core/time.js';
import { logger, setLogLevel, REDACTED_KEYS } from '../../../src/core/logger.js';

describe('AgentError', () => {
  it('carries code, context, hint and retryability', () => {
    const e = new AgentError('API_TIMEOUT', 'no answer in 5000 ms', { url: 'http://x' }, { hint: 'check the network', retryable: true });
    expect(isAgentError(e, 'API_TIMEOUT')).toBe(true);
    expect(isAgentError(e, 'API_NETWORK')).toBe(false);
    expect(e.toJSON()).toEqual({
      code: 'API_TIMEOUT',
      message: 'no answer in 5000 ms',
      hint: 'check the network',
      retryable: true,
      context: { url: 'http://x' },
    });
    expect(describeError(e)).toContain('hint: check the network');
  });
  it('wraps foreign errors', () => {
    const e = toAgentError(new Error('boom'), 'UPLOAD_FAILED');
    expect(e.code).toBe('UPLOAD_FAILED');
    expect(e.retryable).toBe(false);
  });
  it('takes the hint and retryability of its code from the table when the thrower gives none', () => {
    const e = new AgentError('API_TIMEOUT', 'no answer');
    expect(e.hint).toBe(ERROR_CODES.API_TIMEOUT.hint);
    expect(e.retryable).toBe(ERROR_CODES.API_TIMEOUT.retryable);
    expect(e.retryable).toBe(true);
    expect(new AgentError('SQLITE_CORRUPT', 'damaged').hint).toMatch(/doctor/);
  });
  it('knows which codes exist, for codes that arrive over a wire', () => {
    expect(isErrorCode('API_TIMEOUT')).toBe(true);
    expect(isErrorCode('DRIVER_R30X_NO_FINGER')).toBe(true);
    expect(isErrorCode('SQLITE_BUSY')).toBe(true);
    expect(isErrorCode('API_TIMEOUTX')).toBe(false);
    expect(isErrorCode('drop table')).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });
  it('has a layer and a hint for every code in the table', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^INTERNAL$/);
      expect(info.hint.length, code).toBeGreaterThan(10);
    }
  });
});

describe('backoff', () => {
  it('grows exponentially up to the cap, with full jitter', () => {
    const o = { baseMs: 100, capMs: 5000 };
    expect(backoffCeiling(0, o)).toBe(100);
    expect(backoffCeiling(3, o)).toBe(800);
    expect(backoffCeiling(30, o)).toBe(5000);
    expect(backoffDelay(3, { ...o, random: () => 0.5 })).toBe(400);
    expect(backoffDelay(3, { ...o, random: () => 0 })).toBe(0);
  });
});

describe('time', () => {
  it('times out a slow promise with a retryable error', async () => {
    await expect(withTimeout(sleep(200), 10)).rejects.toMatchObject({ code: 'CORE_TIMEOUT', retryable: true });
  });
  it('aborts a sleep', async () => {
    const ac = new AbortController();
    const p = sleep(10_000, ac.signal);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'CORE_ABORTED' });
  });
});

describe('logger', () => {
  it('changes levels per module at run time', () => {
    const a = logger('test:a');
    const b = logger('other:b');
    setLogLevel('test:*', 'debug');
    expect(a.level).toBe('debug');
    expect(b.level).not.toBe('debug');
    setLogLevel('*', 'warn');
    expect(a.level).toBe('warn');
    expect(logger('test:c').level).toBe('warn');
  });
  it('redacts templates and secrets', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _e, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const paths = REDACTED_KEYS.flatMap((k) => [k, `*.${k}`]);
    const log = pino({ redact: { paths, censor: '[redacted]' } }, sink);
    log.info({ template: 'AAAA', user: { password: 'p', apiSecret: 's' } }, 'x');
    expect(lines[0]).not.toContain('AAAA');
    expect(lines[0]).toContain('[redacted]');
    expect(lines[0]).not.toContain('"p"');
  });
});
