import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/core/errors.js';
import { logLevels, logger } from '../../../src/core/logger.js';
import { DEFAULT_MAX_PENDING } from '../../../src/store/outbox.js';
import {
  applyLogging,
  configFromEnv,
  configFromFlags,
  envName,
  loadConfig,
  parseConfig,
  secretsFilePath,
} from '../../../src/config/config.js';

const dir = mkdtempSync(join(tmpdir(), 'config-test-'));
let n = 0;
function file(text: string, ext = 'yaml'): string {
  const f = join(dir, `c${n++}.${ext}`);
  writeFileSync(f, text);
  return f;
}

function failure(fn: () => unknown): AgentError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  }
  throw new Error('expected an error');
}

describe('config: defaults and layers', () => {
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
      historyHours: 24,
      homeAssistant: { sites: [], discoveryPrefix: 'homeassistant' },
    });
    expect(c.console.alerts).toEqual({
      lostMinutes: 2,
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
  });

  it('reads JSON as well as YAML', () => {
    const c = loadConfig({ file: file('{"terminal": {"id": "gate-7"}}', 'json'), env: {} });
    expect(c.terminal.id).toBe('gate-7');
  });

  it('applies defaults < file < environment < flags', () => {
    const f = file('terminal:\n  id: from-file\n  site: s1\napi:\n  pathForm: attendance\n');
    const env = { EDGE_AGENT_TERMINAL__ID: 'from-env', EDGE_AGENT_API__PATH_FORM: 'api', EDGE_AGENT_OUTBOX__BATCH_SIZE: '50' };
    const c = loadConfig({ file: f, env, overrides: configFromFlags({ terminal: 'from-flag' }) });
    expect(c.terminal.id).toBe('from-flag');
    expect(c.terminal.site).toBe('s1');
    expect(c.api.pathForm).toBe('api');
    expect(c.outbox.batchSize).toBe(50);
  });

  it("leaves the tests' own EDGE_AGENT_TEST_* variables out of the configuration", () => {
    const env = { EDGE_AGENT_TEST_HIDE: 'socat', EDGE_AGENT_TEST_CLOCK_OFFSET_FILE: '/tmp/x', EDGE_AGENT_CLOCK__SOURCES: '[]' };
    expect(configFromEnv(env)).toEqual({ clock: { sources: [] } });
    expect(loadConfig({ env }).clock.sources).toEqual([]);
  });

  it('keeps a string key a string when the environment value looks like a number', () => {
    expect(configFromEnv({ EDGE_AGENT_TERMINAL__ID: '123' })).toEqual({ terminal: { id: '123' } });
    expect(loadConfig({ env: { EDGE_AGENT_TERMINAL__ID: '123' } }).terminal.id).toBe('123');
  });

  it('maps the short variables and lists', () => {
    expect(configFromEnv({ EDGE_AGENT_LOG_LEVEL: 'debug', EDGE_AGENT_SECRETS: '/x/s.yaml', EDGE_AGENT_UPSTREAM: 'api,mqtt' })).toEqual({
      logging: { level: 'debug' },
      secretsFile: '/x/s.yaml',
      upstream: ['api', 'mqtt'],
    });
    expect(envName('api.pathForm')).toBe('EDGE_AGENT_API__PATH_FORM');
    // the generic form still works (the unit sets none: the data folder comes from the config)
    expect(configFromEnv({ EDGE_AGENT_DATA_DIR: '/var/lib/edge-agent', EDGE_AGENT_LOGGING__MODULES: '{"drivers:*":"debug"}' })).toEqual({
      dataDir: '/var/lib/edge-agent',
      logging: { modules: { 'drivers:*': 'debug' } },
    });
  });

  it('maps the common flags', () => {
    expect(configFromFlags({ api: 'http://h', mqtt: 'mqtt://b', 'log-format': 'pretty', secrets: '/s' })).toEqual({
      api: { url: 'http://h' },
      mqtt: { url: 'mqtt://b' },
      logging: { format: 'pretty' },
      secretsFile: '/s',
    });
  });

  it('--mqtt alone is monitoring: punches go to the broker only with --upstream', () => {
    expect(configFromFlags({ mqtt: 'mqtt://b' })).toEqual({ mqtt: { url: 'mqtt://b' } });
    expect(loadConfig({ env: {}, overrides: configFromFlags({ api: 'http://h', mqtt: 'mqtt://b' }) }).upstream).toEqual(['api']);
    expect(configFromFlags({ mqtt: 'mqtt://b', upstream: 'api,mqtt' }).upstream).toEqual(['api', 'mqtt']);
  });
});

describe('config: the file and where a value came from', () => {
  it('syntax error with line and column', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  id: gate-1\n   site: [x\n'), env: {} }));
    expect(e.code).toBe('CONFIG_SYNTAX');
    expect(e.context.line).toBeTypeOf('number');
    expect(e.context.column).toBeTypeOf('number');
    expect(e.message).toMatch(/at line \d+, column \d+/);
  });

  it('duplicate key is a syntax error', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  id: a\n  id: b\n'), env: {} }));
    expect(e.code).toBe('CONFIG_SYNTAX');
  });

  it('missing file', () => {
    const e = failure(() => loadConfig({ file: join(dir, 'nope.yaml'), env: {} }));
    expect(e.code).toBe('CONFIG_NOT_FOUND');
    expect(e.message).toContain('does not exist');
    expect(e.hint).toContain('edge-agent provision');
  });

  it('a file that is not a mapping', () => {
    const e = failure(() => loadConfig({ file: file('- a\n- b\n'), env: {} }));
    expect(e.code).toBe('CONFIG_WRONG_TYPE');
  });

  it('says when the bad value came from the environment', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  mode: in\n'), env: { EDGE_AGENT_TERMINAL__MODE: 'both' } }));
    expect(e.code).toBe('CONFIG_BAD_ENUM');
    expect(e.context.origin).toBe('environment EDGE_AGENT_TERMINAL__MODE');
    expect(e.hint).toContain('EDGE_AGENT_TERMINAL__MODE');
  });
});

describe('config: logging', () => {
  it('applies the default level and per-module levels', () => {
    logger('test:a');
    logger('drivers:x');
    applyLogging({ level: 'warn', format: 'json', modules: { 'drivers:*': 'debug' } });
    const levels = logLevels();
    expect(levels['test:a']).toBe('warn');
    expect(levels['drivers:x']).toBe('debug');
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
