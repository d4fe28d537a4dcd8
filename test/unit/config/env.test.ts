import { describe, expect, it } from 'vitest';
import { configFromEnv, envName } from '../../../src/config/env.js';
import { loadConfig } from '../../../src/config/load.js';

describe('env: EDGE_AGENT_* variables as a layer of the configuration', () => {
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

  it('leaves out empty variables and the config file variable, and keeps a null', () => {
    expect(
      configFromEnv({ EDGE_AGENT_API__URL: '', EDGE_AGENT_CONFIG: '/etc/x.yaml', EDGE_AGENT_MQTT__URL: 'null', PATH: '/bin' }),
    ).toEqual({
      mqtt: { url: null },
    });
    expect(envName('terminal.timeZone')).toBe('EDGE_AGENT_TERMINAL__TIME_ZONE');
  });
});
