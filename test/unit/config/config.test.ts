import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentError } from '../../../src/core/errors.js';
import { DEFAULT_MAX_PENDING } from '../../../src/store/outbox.js';
import { parseConfig } from '../../../src/config/config.js';
import { secretsFilePath } from '../../../src/config/secrets.js';
import { loadConfig } from '../../../src/config/load.js';
import { configFiles, failure } from '../../helpers/config.js';

const { file } = configFiles('config-test-');

describe('config: the defaults', () => {
  it('fills every default from an empty file', () => {
    const c = loadConfig({ file: file(''), env: {} });
    expect(c.terminal).toEqual({ id: 'terminal-1', site: 'site-1', timeZone: 'UTC', mode: 'toggle' });
    expect(c.api.url).toBeNull();
    expect(c.logging.format).toBe('json');
    expect(c.secretsFile).toBeNull();
    expect(secretsFilePath(c)).toBe(join(c.dataDir, 'secrets.yaml'));
    // The outbox cap of the config is the store's own default: a month of a busy gate.
    expect(c.outbox.maxPending).toBe(DEFAULT_MAX_PENDING);
    expect(DEFAULT_MAX_PENDING).toBeGreaterThanOrEqual(1_000_000);
  });

  it('gives the operations console loopback, alert rules and no Home Assistant by default, and checks what a file sets', () => {
    const c = loadConfig({ file: file(''), env: {} });
    expect(c.console).toMatchObject({
      host: '127.0.0.1',
      port: 8470,
      tls: null,
      timeZone: null,
      historyHours: 24,
      homeAssistant: { sites: [], discoveryPrefix: 'homeassistant' },
    });
    expect(c.console.alerts).toEqual({
      lostMinutes: 2,
      degraded: true,
      silentMinutes: 5,
      oldestPendingMinutes: 30,
      deadLetters: true,
      clockUnsynchronized: true,
      minFreeDiskMb: 200,
      maxCpuTempC: 80,
      terminalAlerts: true,
    });
    expect(
      loadConfig({ file: file('console: {alerts: {lostMinutes: null}, homeAssistant: {sites: ["*"]}}'), env: {} }).console,
    ).toMatchObject({ alerts: { lostMinutes: null }, homeAssistant: { sites: ['*'] } });
    expect(failure(() => loadConfig({ file: file('console: {homeAssistant: {sites: ["plant a"]}}'), env: {} })).message).toContain(
      'console.homeAssistant.sites',
    );
    expect(
      failure(() => loadConfig({ file: file('console: {allowedOrigins: ["https://ops.example.com/path"]}'), env: {} })).message,
    ).toContain('console.allowedOrigins');
    expect(failure(() => loadConfig({ file: file('console: {timeZone: Mars/Olympus}'), env: {} })).message).toContain('console.timeZone');
  });
});

describe('config: badge readers and what a person must present', () => {
  it('takes badge readers with their line format, and the credential rule with its window', () => {
    const c = parseConfig({
      scanners: [
        { family: 'badge-serial', path: '/dev/ttyUSB1', format: 'em4100-hex' },
        { family: 'badge-hid', path: '/dev/hidraw0' },
      ],
      policy: { require: 'both', bothWithinSec: 20 },
    });
    expect(c.scanners).toEqual([
      { family: 'badge-serial', path: '/dev/ttyUSB1', format: 'em4100-hex' },
      { family: 'badge-hid', path: '/dev/hidraw0' },
    ]);
    expect(c.policy).toMatchObject({ require: 'both', bothWithinSec: 20 });
    expect(parseConfig({}).policy).toMatchObject({ require: 'either', bothWithinSec: 15 });
  });

  it('names the mistake: a format on a fingerprint module, an unknown format, an unknown rule', () => {
    const err = (raw: unknown) => {
      try {
        parseConfig(raw);
      } catch (e) {
        return e as AgentError;
      }
      throw new Error('accepted');
    };
    expect(err({ scanners: [{ family: 'r30x', path: '/dev/ttyUSB0', format: 'em4100-dec' }] })).toMatchObject({
      code: 'CONFIG_INVALID',
      context: { key: 'scanners.0.format' },
      hint: expect.stringContaining('only for badge-serial and badge-hid'),
    });
    expect(err({ scanners: [{ family: 'badge-serial', path: '/dev/ttyUSB0', format: 'em4200' }] })).toMatchObject({
      code: 'CONFIG_BAD_ENUM',
      context: { key: 'scanners.0.format' },
    });
    expect(err({ policy: { require: 'finger' } })).toMatchObject({ code: 'CONFIG_BAD_ENUM', hint: expect.stringContaining('either') });
  });
});
