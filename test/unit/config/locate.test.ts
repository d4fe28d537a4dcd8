import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configForFlags, loadConfig } from '../../../src/config/load.js';
import { defaultDataDir, demoConfigPath, locateConfig } from '../../../src/config/locate.js';
import { AgentError } from '../../../src/core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'locate-'));
const installed = join(dir, 'etc-config.yaml');
const demo = join(dir, 'demo-config.yaml');
writeFileSync(installed, 'terminal: {id: installed}\n');
writeFileSync(demo, 'terminal: {id: demo}\n');
const flagFile = join(dir, 'flag.yaml');
writeFileSync(flagFile, 'terminal: {id: flag}\n');
const envFile = join(dir, 'env.yaml');
writeFileSync(envFile, 'terminal: {id: env}\n');
const nowhere = join(dir, 'missing.yaml');

describe('one rule to find the configuration', () => {
  it('--config, then $EDGE_AGENT_CONFIG, then the installed config, then the demo of a checkout', () => {
    const env = { EDGE_AGENT_CONFIG: envFile, EDGE_AGENT_TEST_INSTALLED_CONFIG: installed, EDGE_AGENT_TEST_DEMO_CONFIG: demo };
    expect(locateConfig(flagFile, env)).toMatchObject({ file: flagFile, origin: 'flag', note: null });
    expect(locateConfig(undefined, env)).toMatchObject({ file: envFile, origin: 'env' });
    expect(locateConfig(undefined, { ...env, EDGE_AGENT_CONFIG: '' })).toMatchObject({ file: installed, origin: 'installed' });
    const d = locateConfig(undefined, { EDGE_AGENT_TEST_INSTALLED_CONFIG: nowhere, EDGE_AGENT_TEST_DEMO_CONFIG: demo });
    expect(d).toMatchObject({ file: demo, origin: 'demo' });
    expect(d.note).toMatch(/embedded demo's .*demo-config\.yaml \(in a checkout only/);
  });

  it('finds nothing rather than guessing, and says where it looked', () => {
    const none = locateConfig(undefined, { EDGE_AGENT_TEST_INSTALLED_CONFIG: nowhere, EDGE_AGENT_TEST_DEMO_CONFIG: '' });
    expect(none.file).toBeNull();
    expect(none.looked).toEqual([
      '--config (not given)',
      '$EDGE_AGENT_CONFIG (not set)',
      `${nowhere} (does not exist)`,
      "the embedded demo's config (only in a checkout)",
    ]);
  });

  it('a command that reads punches refuses without one (CONFIG_NONE naming the places), and may go on when it needs none', () => {
    const env = { EDGE_AGENT_TEST_INSTALLED_CONFIG: nowhere, EDGE_AGENT_TEST_DEMO_CONFIG: '' };
    let err: unknown;
    try {
      configForFlags({ data: join(dir, 'data') }, env, { command: 'edge-agent punch' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('CONFIG_NONE');
    expect((err as AgentError).message).toContain(
      `edge-agent punch needs this terminal's configuration and found none; looked at: --config (not given), $EDGE_AGENT_CONFIG (not set), ${nowhere} (does not exist)`,
    );
    expect((err as AgentError).hint).toMatch(/--config FILE .*edge-agent provision/);
    expect(configForFlags({}, env, { require: false }).location.file).toBeNull();
  });

  it('says so when the demo config of a checkout is used', () => {
    const said: string[] = [];
    const c = configForFlags(
      {},
      { EDGE_AGENT_TEST_INSTALLED_CONFIG: nowhere, EDGE_AGENT_TEST_DEMO_CONFIG: demo },
      { say: (l) => said.push(l) },
    );
    expect(c.terminal.id).toBe('demo');
    expect(said).toHaveLength(1);
  });

  it('this checkout has a demo config path (data/embedded-config.yaml beside package.json)', () => {
    expect(demoConfigPath({})).toMatch(/\/data\/embedded-config\.yaml$/);
  });
});

describe('the data folder comes from the configuration alone', () => {
  it('a relative dataDir is relative to the config file, not to the working folder', () => {
    const sub = join(dir, 'site');
    mkdirSync(sub, { recursive: true });
    const f = join(sub, 'config.yaml');
    writeFileSync(f, 'dataDir: ./db\nsecretsFile: s.yaml\n');
    const c = loadConfig({ file: f, env: {} });
    expect(c.dataDir).toBe(join(sub, 'db'));
    expect(c.secretsFile).toBe(join(sub, 's.yaml'));
  });

  it('a config naming no dataDir gets the default beside it (or /var/lib/edge-agent for /etc)', () => {
    const f = join(dir, 'bare.yaml');
    writeFileSync(f, 'terminal: {id: t}\n');
    expect(loadConfig({ file: f, env: {} }).dataDir).toBe(join(dir, 'data'));
    expect(defaultDataDir('/etc/edge-agent/config.yaml')).toBe('/var/lib/edge-agent');
  });

  it('flags still win over the file', () => {
    const f = join(dir, 'bare2.yaml');
    writeFileSync(f, 'dataDir: /srv/a\n');
    expect(loadConfig({ file: f, env: {}, overrides: { dataDir: join(dir, 'flag-data') } }).dataDir).toBe(join(dir, 'flag-data'));
  });
});
