import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { loadSecrets, secretValues } from '../../src/config/secrets.js';
import { AttendanceClient } from '../../src/api/client.js';
import { has } from '../helpers/system.js';

/**
 * The technician's path end to end, with real parts: the attendance service on loopback, a real
 * MQTT broker, an R30x simulator on a socat pty (real serial bytes), and the real CLI.
 * provision (non-interactive) → punch → run delivers it → doctor passes → a broken config fails
 * doctor with the key named; and no output of any of these ever holds a secret.
 */
describe.skipIf(!has('socat'))('provision → run → doctor, end to end, the module on a real pty (needs socat)', { timeout: 90_000 }, () => {
  let service: InProcessService;
  let broker: TestBroker;
  let sim: ChildProcess;
  let device: string;
  const dir = mkdtempSync(join(tmpdir(), 'provision-e2e-'));
  const data = join(dir, 'data');
  const configFile = join(dir, 'etc', 'config.yaml');
  // Next to the config, not in the data folder: run finds it through secretsFile in the config.
  const secretsFile = join(dir, 'etc', 'secrets.yaml');
  const secretFile = join(dir, 'api-secret');
  const mqttPasswordFile = join(dir, 'mqtt-password');
  const mqttPassword = 'mqtt-pw-6c1f0e9d';
  /** Everything every command printed, for the leak check. */
  let allOutput = '';
  const run = async (args: string[], env: Record<string, string> = {}) => {
    const r = await runCli(args, { env: { EDGE_AGENT_LOG_LEVEL: 'trace', ...env } });
    allOutput += r.stdout + r.stderr;
    return r;
  };

  beforeAll(async () => {
    service = await startService();
    const admin = new AttendanceClient({
      baseUrl: service.url,
      clientId: service.clientId,
      apiKey: service.apiKey,
      apiSecret: service.apiSecret,
    });
    expect(
      (await admin.addOrUpdateUser({ employeeCode: 'E1001', firstName: 'Ann', lastName: 'Lee', loginName: 'e1001', password: 'pw-e1001' }))
        .statusCode,
    ).toBe('SUCCESS');
    broker = await startBroker();
    writeFileSync(secretFile, `${service.apiSecret}\n`, { mode: 0o600 });
    writeFileSync(mqttPasswordFile, mqttPassword, { mode: 0o600 });
    sim = spawnCli(['simulate', 'r30x', '--link', join(dir, 'ttyR30X')]);
    device = (await waitForLine(sim, /device: (\S+)/, 45_000))[1]!;
  });

  afterAll(async () => {
    sim?.kill('SIGTERM');
    await broker?.stop();
    await service?.stop();
  });

  it('provisions non-interactively: checks API, MQTT and the scanner, writes config and a 0600 secrets file', async () => {
    const r = await run([
      'provision',
      '--non-interactive',
      '--config',
      configFile,
      '--secrets',
      secretsFile,
      '--data',
      data,
      '--terminal',
      'gate-7',
      '--site',
      'plant-1',
      '--timezone',
      'Europe/Berlin',
      '--mode',
      'toggle',
      '--api',
      service.url,
      '--client-id',
      service.clientId,
      '--api-key',
      service.apiKey,
      '--api-secret-file',
      secretFile,
      '--mqtt',
      broker.url,
      '--mqtt-username',
      'gate-7',
      '--mqtt-password-file',
      mqttPasswordFile,
      '--upstream',
      'api,mqtt',
      '--scanner',
      `r30x:${device}:57600`,
      '--generate-ops-key',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      configVersion: number;
      generatedTemplateKey: boolean;
      generatedOpsKey: boolean;
      checks: Array<{ name: string; status: string }>;
      summary: Record<string, string>;
    };
    expect(out.ok).toBe(true);
    expect(out.configVersion).toBe(1);
    expect(out.generatedTemplateKey).toBe(true);
    expect(out.generatedOpsKey).toBe(true);
    expect(out.checks.map((c) => [c.name, c.status])).toEqual([
      ['api-token', 'pass'],
      ['mqtt', 'pass'],
      [`scanner r30x:${device}`, 'pass'],
    ]);
    expect(out.summary['API secret']).toBe(`set (${service.apiSecret.length} characters)`);

    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    const secrets = loadSecrets({ file: secretsFile, credentialsDir: null });
    expect(secrets.apiKey).toBe(service.apiKey);
    expect(secrets.apiSecret).toBe(service.apiSecret);
    expect(secrets.mqttPassword).toBe(mqttPassword);
    expect(secrets.templateKey).toHaveLength(32);
    expect(secrets.opsKey).toHaveLength(32);

    const config = YAML.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    expect(config.terminal).toEqual({ id: 'gate-7', site: 'plant-1', timeZone: 'Europe/Berlin', mode: 'toggle' });
    expect(config.api).toMatchObject({ url: service.url, clientId: service.clientId });
    expect(config.mqtt).toMatchObject({ url: broker.url, username: 'gate-7' });
    expect(config.upstream).toEqual(['api', 'mqtt']);
    expect(config.scanners).toEqual([{ family: 'r30x', path: device, baud: 57600 }]);
    const configText = readFileSync(configFile, 'utf8');
    for (const s of secretValues(secrets)) expect(configText).not.toContain(s);
  });

  it('the written config works: a punch is recorded and the agent delivers it', async () => {
    const p = await run(['punch', '--config', configFile, '--code', 'E1001', '--json']);
    expect(p.code, p.stderr).toBe(0);
    // The scanner is left to the simulator process for doctor; the agent runs without it here.
    const daemon = spawnCli(['run', '--config', configFile], { env: { EDGE_AGENT_LOG_LEVEL: 'trace', EDGE_AGENT_SCANNERS: '[]' } });
    let daemonOut = '';
    daemon.stdout!.on('data', (d: Buffer) => (daemonOut += d));
    daemon.stderr!.on('data', (d: Buffer) => (daemonOut += d));
    try {
      let delivered = 0;
      const deadline = Date.now() + 60_000;
      while (delivered < 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 300));
        const q = await runCli(['queue', 'status', '--config', configFile, '--json']);
        if (q.code === 0) delivered = (JSON.parse(q.stdout) as { delivered: number }).delivered;
      }
      expect(delivered, daemonOut).toBe(1);
      // The key provision generated signs commands: ops send finds it through the config's secretsFile.
      const ping = await run(['ops', 'send', '--config', configFile, 'ping', '--json']);
      expect(ping.code, ping.stderr).toBe(0);
      expect(JSON.parse(ping.stdout)).toMatchObject({ status: 'ok', result: { pong: true, terminal: 'gate-7' } });
    } finally {
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      await exited;
      allOutput += daemonOut;
    }
  }, 120_000);

  it('doctor --json passes on the provisioned terminal', async () => {
    const r = await run(['doctor', '--config', configFile, '--json']);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; status: string; detail: string; hint: string | null }>;
    };
    expect(report.ok, r.stdout).toBe(true);
    expect(r.code).toBe(0);
    const status = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
    for (const name of [
      'config',
      'secrets',
      'api-token',
      'mqtt',
      'ops-key',
      `scanner r30x:${device}`,
      'template-key',
      'database',
      'file-modes',
      'disk',
      'outbox',
    ])
      expect(status[name], name).toBe('pass');
    expect(report.checks.find((c) => c.name === 'ops-key')?.detail).toContain(`opsKey (key id site) from ${secretsFile}`);
    expect(['pass', 'warn']).toContain(status.clock);
    for (const c of report.checks) expect(Object.keys(c).sort()).toEqual(['detail', 'hint', 'name', 'status']);
  });

  it('run again, it edits the setup: keeps what is not given, bumps configVersion, keeps the template key', async () => {
    const before = loadSecrets({ file: secretsFile, credentialsDir: null });
    const r = await run([
      'provision',
      '--non-interactive',
      '--config',
      configFile,
      '--secrets',
      secretsFile,
      '--site',
      'plant-2',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { configVersion: number; changed: string[] };
    expect(out.configVersion).toBe(2);
    expect(out.changed).toEqual(['terminal.site']);
    const config = YAML.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    expect(config.terminal).toEqual({ id: 'gate-7', site: 'plant-2', timeZone: 'Europe/Berlin', mode: 'toggle' });
    const after = loadSecrets({ file: secretsFile, credentialsDir: null });
    expect(after.templateKey!.equals(before.templateKey!)).toBe(true);
    expect(after.apiSecret).toBe(before.apiSecret);
  });

  it('refuses a wrong API secret and writes nothing', async () => {
    const wrong = join(dir, 'wrong-secret');
    writeFileSync(wrong, 'not-the-secret', { mode: 0o600 });
    const before = readFileSync(configFile, 'utf8');
    const r = await run([
      'provision',
      '--non-interactive',
      '--config',
      configFile,
      '--secrets',
      secretsFile,
      '--api-secret-file',
      wrong,
      '--terminal',
      'gate-8',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PROVISION_CHECK_FAILED');
    expect(r.stderr).toContain('API_AUTH_FAILED');
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    expect(loadSecrets({ file: secretsFile, credentialsDir: null }).apiSecret).toBe(service.apiSecret);
  });

  it('doctor fails on a broken config and names the key', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, readFileSync(configFile, 'utf8').replace('mode: toggle', 'mode: sideways'));
    const r = await run(['doctor', '--config', broken, '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; status: string; detail: string; hint: string | null }>;
    };
    expect(report.ok).toBe(false);
    const config = report.checks.find((c) => c.name === 'config')!;
    expect(config.status).toBe('fail');
    expect(config.detail).toContain('CONFIG_BAD_ENUM');
    expect(config.detail).toContain('terminal.mode');
    expect(config.detail).toContain('"sideways"');
    expect(config.hint).toContain('use in, out or toggle');
    // Nothing that depends on the config is reported as passing.
    expect(report.checks.filter((c) => c.status === 'pass').map((c) => c.name)).toEqual([]);

    const text = await run(['doctor', '--config', broken]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/FAIL\s+config\s+CONFIG_BAD_ENUM: .*terminal\.mode/);
  });

  it('doctor fails when the secrets file is readable by others', async () => {
    chmodSync(secretsFile, 0o644);
    try {
      const r = await run(['doctor', '--config', configFile, '--json']);
      expect(r.code).toBe(1);
      const secrets = (
        JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string; detail: string; hint: string }> }
      ).checks.find((c) => c.name === 'secrets')!;
      expect(secrets.status).toBe('fail');
      expect(secrets.detail).toContain('SECRETS_PERMISSIONS');
      expect(secrets.hint).toBe(`run: chmod 600 ${secretsFile}`);
    } finally {
      chmodSync(secretsFile, 0o600);
    }
  });

  it('no command printed a secret, at log level trace', () => {
    const secrets = loadSecrets({ file: secretsFile, credentialsDir: null });
    const values = [...secretValues(secrets), mqttPassword, service.apiSecret];
    expect(allOutput.length).toBeGreaterThan(1000);
    for (const v of values) expect(allOutput.includes(v), `a secret (${v.length} chars) appears in the output`).toBe(false);
  });
});
