import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../../src/config/config.js';
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
});
