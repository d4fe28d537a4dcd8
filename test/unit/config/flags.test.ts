import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../../src/config/flags.js';
import { loadConfig } from '../../../src/config/load.js';

describe('flags: the common flags as a layer of the configuration', () => {
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

  it('maps each flag to its key, and leaves out what is not given', () => {
    expect(
      configFromFlags({
        data: '/d',
        terminal: 'gate-1',
        site: 'north',
        mode: 'in',
        'client-id': 'c',
        'path-form': 'attendance',
        'log-level': 'debug',
        upstream: ' api , mqtt ,',
      }),
    ).toEqual({
      dataDir: '/d',
      terminal: { id: 'gate-1', site: 'north', mode: 'in' },
      api: { clientId: 'c', pathForm: 'attendance' },
      logging: { level: 'debug' },
      upstream: ['api', 'mqtt'],
    });
    // the secrets flags are read by loadSecrets, never written into the configuration
    expect(configFromFlags({ 'api-key': 'k', 'api-secret-file': '/s', config: '/c.yaml' })).toEqual({});
  });
});
