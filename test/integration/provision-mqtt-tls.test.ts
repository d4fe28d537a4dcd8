import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runCli } from '../helpers/cli.js';
import { startTlsBroker, type TlsBroker } from '../helpers/broker.js';
import { has } from '../helpers/system.js';

/**
 * MQTT over TLS with a username and password, as a site broker is run: a certificate from a CA
 * made here, anonymous clients refused. provision must check the CA file, the credentials and the
 * connection, and doctor must find the same. Against Mosquitto where it is installed, otherwise
 * against aedes behind a TLS server with an authenticate hook (the same checks either way).
 */
const kind = has('mosquitto', 'mosquitto_passwd') ? 'mosquitto' : 'aedes';

describe(`provision and doctor against a TLS broker with a password (${kind})`, { timeout: 60_000 }, () => {
  let broker: TlsBroker;
  let dir: string;
  const f = (name: string) => join(dir, name);
  const password = 'tls-pw-3e8a71';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mqtt-tls-'));
    broker = await startTlsBroker(kind, 'gate-7', password);
    writeFileSync(f('pw'), password, { mode: 0o600 });
    writeFileSync(f('wrong-pw'), 'nope', { mode: 0o600 });
  });

  afterAll(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const provision = (extra: string[], name: string) =>
    runCli([
      'provision',
      '--non-interactive',
      '--config',
      f(`${name}.yaml`),
      '--secrets',
      f(`${name}-secrets.yaml`),
      '--terminal',
      'gate-7',
      '--mqtt',
      broker.url,
      '--upstream',
      'mqtt',
      '--mqtt-username',
      'gate-7',
      ...extra,
      '--json',
    ]);

  it('checks CA, credentials and connection, writes the TLS file paths, and doctor agrees', async () => {
    const r = await provision(['--tls-ca', broker.ca, '--mqtt-password-file', f('pw')], 'good');
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> };
    expect(out.checks.find((c) => c.name === 'mqtt')).toMatchObject({
      status: 'pass',
      detail: `connected to ${broker.url} as gate-7 with TLS files (monitoring and delivery of punches)`,
    });
    const config = YAML.parse(readFileSync(f('good.yaml'), 'utf8')) as { mqtt: { tls: { ca: string } }; upstream: string[] };
    expect(config.mqtt.tls.ca).toBe(broker.ca);
    expect(config.upstream).toEqual(['mqtt']);
    expect(readFileSync(f('good.yaml'), 'utf8')).not.toContain(password);

    const d = await runCli(['doctor', '--config', f('good.yaml'), '--json']);
    const mqtt = (JSON.parse(d.stdout) as { checks: Array<{ name: string; status: string }> }).checks.find((c) => c.name === 'mqtt');
    expect(mqtt?.status, d.stdout).toBe('pass');
  });

  it('a wrong password is refused and nothing is written', async () => {
    const r = await provision(['--tls-ca', broker.ca, '--mqtt-password-file', f('wrong-pw')], 'wrong');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PROVISION_CHECK_FAILED');
    expect(r.stderr).toMatch(/mqtt: cannot connect .*(Not authorized|Bad username or password)/i);
    expect(r.stderr).toContain('the broker refused the credentials');
    expect(existsSync(f('wrong.yaml'))).toBe(false);
  });

  it('without the CA file the broker certificate is not trusted', async () => {
    const r = await provision(['--mqtt-password-file', f('pw')], 'noca');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mqtt: cannot connect .*(self[- ]signed|unable to verify|certificate)/i);
  });
});
