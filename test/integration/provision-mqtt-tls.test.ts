import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runCli } from '../helpers/cli.js';
import { freePort, mosquittoPath } from '../helpers/broker.js';

/**
 * MQTT over TLS with a username and password, as a site broker is run: Mosquitto with a
 * certificate from a CA made here (openssl), anonymous clients refused. provision must check the
 * CA file, the credentials and the connection, and doctor must find the same.
 */
const dir = mkdtempSync(join(tmpdir(), 'mqtt-tls-'));
const f = (name: string) => join(dir, name);

function openssl(args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`mosquitto did not listen on ${port}`);
}

describe('provision and doctor against a TLS broker with a password', { timeout: 60_000 }, () => {
  let broker: ChildProcess;
  let url: string;
  const password = 'tls-pw-3e8a71';

  beforeAll(async () => {
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=edge-agent test CA']);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
    writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext']);
    const passwd = spawnSync('mosquitto_passwd', ['-b', '-c', f('passwd'), 'gate-7', password], { encoding: 'utf8' });
    expect(passwd.status, passwd.stderr).toBe(0);
    const port = await freePort();
    writeFileSync(
      f('mosquitto.conf'),
      [`listener ${port} 127.0.0.1`, `cafile ${f('ca.pem')}`, `certfile ${f('server.pem')}`, `keyfile ${f('server.key')}`, 'allow_anonymous false', `password_file ${f('passwd')}`, 'persistence false', 'user root', ''].join('\n'),
    );
    const bin = mosquittoPath();
    expect(bin, 'mosquitto is installed (CI installs it)').not.toBeNull();
    broker = spawn(bin!, ['-c', f('mosquitto.conf')], { stdio: 'ignore' });
    await waitForPort(port);
    url = `mqtts://127.0.0.1:${port}`;
    writeFileSync(f('pw'), password, { mode: 0o600 });
    writeFileSync(f('wrong-pw'), 'nope', { mode: 0o600 });
  });

  afterAll(() => {
    broker?.kill('SIGKILL');
  });

  const provision = (extra: string[], name: string) =>
    runCli(['provision', '--non-interactive', '--config', f(`${name}.yaml`), '--secrets', f(`${name}-secrets.yaml`), '--terminal', 'gate-7', '--mqtt', url, '--mqtt-username', 'gate-7', ...extra, '--json']);

  it('checks CA, credentials and connection, writes the TLS file paths, and doctor agrees', async () => {
    const r = await provision(['--tls-ca', f('ca.pem'), '--mqtt-password-file', f('pw')], 'good');
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string }> };
    expect(out.checks.find((c) => c.name === 'mqtt')).toMatchObject({ status: 'pass', detail: `connected to ${url} as gate-7 with TLS files` });
    const config = YAML.parse(readFileSync(f('good.yaml'), 'utf8')) as { mqtt: { tls: { ca: string } }; upstream: string[] };
    expect(config.mqtt.tls.ca).toBe(f('ca.pem'));
    expect(config.upstream).toEqual(['mqtt']);
    expect(readFileSync(f('good.yaml'), 'utf8')).not.toContain(password);

    const d = await runCli(['doctor', '--config', f('good.yaml'), '--json']);
    const mqtt = (JSON.parse(d.stdout) as { checks: Array<{ name: string; status: string }> }).checks.find((c) => c.name === 'mqtt');
    expect(mqtt?.status).toBe('pass');
  });

  it('a wrong password is refused and nothing is written', async () => {
    const r = await provision(['--tls-ca', f('ca.pem'), '--mqtt-password-file', f('wrong-pw')], 'wrong');
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
