import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { logger, setLogLevel, REDACTED_KEYS } from '../../../src/core/logger.js';

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
