import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../../src/core/errors.js';
import { fail, fromError, pass, warn } from '../../../../src/setup/doctor/check.js';

describe('doctor check results', () => {
  it('pass has no hint; warn and fail say what to do', () => {
    expect(pass('disk', 'ok')).toEqual({ name: 'disk', status: 'pass', detail: 'ok', hint: null });
    expect(warn('disk', 'low', 'free some')).toEqual({ name: 'disk', status: 'warn', detail: 'low', hint: 'free some' });
    expect(fail('disk', 'full', 'free now')).toEqual({ name: 'disk', status: 'fail', detail: 'full', hint: 'free now' });
  });

  it("an AgentError gives its code and message as detail and its own hint; anything else the check's hint", () => {
    const agent = new AgentError('STORE_DATABASE_CORRUPT', 'page 7 is bad', {}, { hint: 'restore from backup' });
    expect(fromError('database', agent, 'unused')).toEqual({
      name: 'database',
      status: 'fail',
      detail: 'STORE_DATABASE_CORRUPT: page 7 is bad',
      hint: 'restore from backup',
    });
    expect(fromError('database', agent, 'unused', 'warn').status).toBe('warn');
    const plain = fromError('disk', new Error('EIO: i/o error'), 'check the card');
    expect(plain).toMatchObject({ status: 'fail', hint: 'check the card' });
    expect(plain.detail).toContain('EIO: i/o error');
  });
});
