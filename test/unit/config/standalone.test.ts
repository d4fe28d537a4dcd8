import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookedAt, standaloneConfig } from '../../../src/config/standalone.js';

const dir = mkdtempSync(join(tmpdir(), 'standalone-'));
const demo = join(dir, 'embedded-config.yaml');
writeFileSync(demo, 'mqtt:\n  url: mqtt://demo:1883\n');
const installed = join(dir, 'installed.yaml');
const base = { EDGE_AGENT_TEST_INSTALLED_CONFIG: join(dir, 'absent.yaml'), EDGE_AGENT_TEST_DEMO_CONFIG: '' };

describe('standaloneConfig', () => {
  it('with no configuration anywhere: defaults and flags, no secrets file, and says where it looked', () => {
    const c = standaloneConfig({ mqtt: 'mqtt://op:1883' }, base, { complete: true });
    expect(c.location.file).toBeNull();
    expect(c.mqtt.url).toBe('mqtt://op:1883');
    expect(c.secretsPath).toBeNull();
    expect(lookedAt(c)).toMatch(/^no configuration found \(looked at: --config \(not given\)/);
    expect(standaloneConfig({ secrets: join(dir, 's.yaml') }, base, { complete: false }).secretsPath).toBe(join(dir, 's.yaml'));
  });

  it("in a checkout: the demo's config only when the flags leave something out, and then said", () => {
    const said: string[] = [];
    const env = { ...base, EDGE_AGENT_TEST_DEMO_CONFIG: demo };
    const complete = standaloneConfig({ mqtt: 'mqtt://op:1883' }, env, { complete: true, say: (l) => said.push(l) });
    expect(complete.location.file).toBeNull();
    expect(complete.mqtt.url).toBe('mqtt://op:1883');
    expect(said).toEqual([]);
    const partial = standaloneConfig({}, env, { complete: false, say: (l) => said.push(l) });
    expect(partial.location.origin).toBe('demo');
    expect(partial.mqtt.url).toBe('mqtt://demo:1883');
    expect(said[0]).toContain(`using the embedded demo's ${demo}`);
    expect(partial.secretsPath).toBe(join(dir, 'data', 'secrets.yaml'));
  });

  it('on a terminal: its installed config fills in, flags win; --config always counts', () => {
    writeFileSync(installed, 'mqtt:\n  url: mqtt://terminal:1883\n  prefix: plant\n');
    const env = { ...base, EDGE_AGENT_TEST_INSTALLED_CONFIG: installed };
    const c = standaloneConfig({ mqtt: 'mqtt://op:1883' }, env, { complete: true });
    expect(c.location.origin).toBe('installed');
    expect([c.mqtt.url, c.mqtt.prefix]).toEqual(['mqtt://op:1883', 'plant']);
    expect(standaloneConfig({ config: installed }, base, { complete: true }).location.origin).toBe('flag');
  });
});
