import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { configError, didYouMean, typeName } from '../../../src/config/explain.js';
import { loadConfig } from '../../../src/config/load.js';
import { configFiles, failure } from '../../helpers/config.js';

const { file } = configFiles('explain-test-');

describe('config: each kind of mistake has its named error naming the key, the value and the fix', () => {
  it('unknown key, with a suggestion', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  idd: gate-1\n'), env: {} }));
    expect(e.code).toBe('CONFIG_UNKNOWN_KEY');
    expect(e.context.key).toBe('terminal.idd');
    expect(e.message).toContain('"gate-1"');
    expect(e.hint).toContain('did you mean "terminal.id"?');
  });

  it('unknown top-level key, with a suggestion from the known keys', () => {
    const e = failure(() => parseConfig({ scaners: [] }));
    expect(e.code).toBe('CONFIG_UNKNOWN_KEY');
    expect(e.context.key).toBe('scaners');
    expect(e.hint).toContain('did you mean "scanners"?');
    expect(didYouMean('zzzzzz', ['api', 'mqtt'])).toBeNull();
  });

  it('unknown key far from every known one: the known keys listed instead of a guess', () => {
    const e = failure(() => parseConfig({ terminal: { zzzzzzzz: 1 } }));
    expect(e.code).toBe('CONFIG_UNKNOWN_KEY');
    expect(e.hint).toContain('remove it; known keys here: id, site, timeZone, mode');
  });

  it('unknown key inside a list item', () => {
    const e = failure(() => parseConfig({ scanners: [{ family: 'r30x', path: '/dev/ttyUSB0', baudrate: 57600 }] }));
    expect(e.code).toBe('CONFIG_UNKNOWN_KEY');
    expect(e.context.key).toBe('scanners.0.baudrate');
    expect(e.hint).toContain('scanners.0.baud');
  });

  it('wrong type', () => {
    const e = failure(() => loadConfig({ file: file('outbox:\n  batchSize: lots\n'), env: {} }));
    expect(e.code).toBe('CONFIG_WRONG_TYPE');
    expect(e.context.key).toBe('outbox.batchSize');
    expect(e.context.value).toBe('lots');
    expect(e.message).toContain('must be a number, not a string');
  });

  it('bad enum value', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  mode: sideways\n'), env: {} }));
    expect(e.code).toBe('CONFIG_BAD_ENUM');
    expect(e.context.key).toBe('terminal.mode');
    expect(e.message).toContain('"sideways"');
    expect(e.hint).toContain('use in, out or toggle');
  });

  it('bad URL (API and MQTT)', () => {
    const e = failure(() => loadConfig({ file: file('api:\n  url: attendance.example.com\n'), env: {} }));
    expect(e.code).toBe('CONFIG_BAD_URL');
    expect(e.context.key).toBe('api.url');
    expect(e.hint).toContain('https://');
    const m = failure(() => parseConfig({ mqtt: { url: 'broker:1883' } }));
    expect(m.code).toBe('CONFIG_BAD_URL');
    expect(m.context.key).toBe('mqtt.url');
    expect(failure(() => parseConfig({ api: { url: 'ftp://x' } })).code).toBe('CONFIG_BAD_URL');
  });

  it('out-of-range value', () => {
    const e = failure(() => parseConfig({ outbox: { batchSize: 0 } }));
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.context.key).toBe('outbox.batchSize');
    expect(e.message).toContain('0 is not valid');
  });

  it('lists every mistake, the first one in context', () => {
    const e = failure(() => parseConfig({ terminal: { mode: 'x' }, api: { url: 'y' } }));
    expect((e.context.issues as unknown[]).length).toBe(2);
    expect(e.message).toContain('terminal.mode');
    expect(e.message).toContain('api.url');
  });
});

describe('explain: the pieces of a message', () => {
  it('did-you-mean takes a key that differs in case, dashes or underscores, or by a typo', () => {
    expect(didYouMean('PATH_FORM', ['pathForm', 'url'])).toBe('pathForm');
    expect(didYouMean('retentionDay', ['retentionDays', 'batchSize'])).toBe('retentionDays');
    expect(didYouMean('b', ['api', 'mqtt'])).toBeNull();
  });

  it('names a value by its kind', () => {
    expect([null, [1], { a: 1 }, 'x', 3].map(typeName)).toEqual(['null', 'a list', 'a mapping', 'a string', 'a number']);
  });

  it('the error: the first issue in context and hint, where it came from, long values cut', () => {
    const e = configError(
      [
        {
          code: 'CONFIG_BAD_ENUM',
          key: 'terminal.mode',
          value: 'x'.repeat(100),
          message: 'm',
          fix: 'use in',
          origin: 'a command-line flag',
        },
        { code: 'CONFIG_INVALID', key: 'outbox.batchSize', value: undefined, message: 'too small', fix: 'at least 1' },
      ],
      'c.yaml',
    );
    expect(e.code).toBe('CONFIG_BAD_ENUM');
    expect(e.hint).toBe('fix terminal.mode (a command-line flag): use in');
    expect(e.message).toContain(`"${'x'.repeat(76)}...`);
    expect(e.message).toContain('outbox.batchSize: missing is not valid (too small); fix: at least 1');
  });
});
