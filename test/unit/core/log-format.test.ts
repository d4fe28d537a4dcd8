import { describe, expect, it } from 'vitest';
import { localIsoTime, prettyLine } from '../../../src/core/log-format.js';
import { AgentError } from '../../../src/core/errors.js';

describe('log lines a person can read', () => {
  it('local times carry their zone', () => {
    const t = localIsoTime(Date.UTC(2026, 2, 1, 8, 0, 0, 5));
    expect(t).toMatch(/^2026-03-01T\d\d:00:00\.005[+-]\d\d:\d\d$/);
    expect(new Date(t).getTime()).toBe(Date.UTC(2026, 2, 1, 8, 0, 0, 5));
  });

  it('an error is one line with its code first, and its hint on a second line', () => {
    const err = new AgentError('API_TIMEOUT', 'no answer in 10000 ms', { url: 'http://x' }).toJSON();
    const out = prettyLine({
      level: 'error',
      time: '2026-03-01T09:00:00.000+01:00',
      module: 'upload:api',
      pid: 7,
      err,
      sink: 'api',
      batch: 3,
      msg: 'delivery to api failed',
    });
    const lines = out.split('\n');
    expect(lines).toHaveLength(3); // two lines and the final newline
    expect(lines[0]).toBe(
      '09:00:00.000+01:00 ERROR API_TIMEOUT: delivery to api failed: no answer in 10000 ms  [upload:api] sink=api batch=3',
    );
    expect(lines[1]).toMatch(/^ {2}hint: the service or the network is slow/);
  });

  it('a plain record is one line; strings with spaces are quoted; no stack trace', () => {
    const out = prettyLine({
      level: 'warn',
      time: '2026-03-01T09:00:00.000Z',
      module: 'agent:scanner',
      msg: 'scanner not available',
      code: 'DRIVER_TIMEOUT',
      err: 'no answer',
      scanner: 'r30x:/dev/fp0',
      note: 'two words',
      err2: undefined,
    });
    expect(out).toBe(
      '09:00:00.000Z WARN  DRIVER_TIMEOUT: scanner not available: no answer  [agent:scanner] scanner=r30x:/dev/fp0 note="two words"\n',
    );
    const withStack = prettyLine({ level: 'error', msg: 'boom', err: { type: 'Error', message: 'bad', stack: 'Error: bad\n    at x' } });
    expect(withStack.split('\n')).toHaveLength(2);
  });
});
