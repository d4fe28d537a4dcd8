import { describe, expect, it } from 'vitest';
import { AgentError, ERROR_CODES, describeError, isAgentError, isErrorCode, toAgentError } from '../../../src/core/errors.js';

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
