import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../../../src/setup/doctor/config.js';
import { configFiles } from '../../../helpers/config.js';

const { dir, file } = configFiles('doctor-config-');

describe('doctor: the config check', () => {
  it('none found: a failure naming where the rule looked, and no config for the other checks', () => {
    const looked = ['--config (not given)', '$EDGE_AGENT_CONFIG (not set)', '/etc/edge-agent/config.yaml (does not exist)'];
    const { result, config } = checkConfig({ env: {} }, { file: null, origin: null, looked, note: null });
    expect(config).toBeNull();
    expect(result).toMatchObject({ name: 'config', status: 'fail' });
    expect(result.detail).toBe(`no configuration found; looked at: ${looked.join(', ')}`);
    expect(result.hint).toContain('edge-agent provision');
  });

  it('a valid file passes with what it sets up; the demo config says it is the demo', () => {
    const f = file('terminal: {id: gate-3, site: north}\nconfigVersion: 4\n');
    const { result, config } = checkConfig({ file: f, env: {} });
    expect(config?.terminal.id).toBe('gate-3');
    expect(result).toEqual({
      name: 'config',
      status: 'pass',
      detail: `${f} is valid (configVersion 4, terminal gate-3 at north, data ${dir}/data)`,
      hint: null,
    });
    const demo = checkConfig({ file: f, env: {} }, { file: f, origin: 'demo', looked: [f], note: null });
    expect(demo.result.detail).toContain("(the embedded demo's: no other configuration was found) is valid");
  });

  it('a bad value fails with its code, the key named, and the fix as hint', () => {
    const { result, config } = checkConfig({ file: file('terminal: {mode: sideways}\n'), env: {} });
    expect(config).toBeNull();
    expect(result.status).toBe('fail');
    expect(result.detail).toMatch(/^CONFIG_BAD_ENUM: .* \[key: terminal\.mode\]$/);
    expect(result.hint).toContain('use in, out or toggle');
  });
});
