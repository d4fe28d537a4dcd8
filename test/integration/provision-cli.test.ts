import { mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type InProcessService } from '../helpers/service.js';
import { runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { defaultDataDir, mergeSetup, parseScannerSpec, readExisting } from '../../src/setup/provision.js';
import { emptySecrets, generateKey, loadSecrets } from '../../src/config/secrets.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache } from '../../src/store/template-cache.js';
import { AgentError } from '../../src/core/errors.js';
import { has } from '../helpers/system.js';

const dir = mkdtempSync(join(tmpdir(), 'provision-cli-'));

describe('edge-agent provision: front-end rules', { timeout: 60_000 }, () => {
  it('says so when stdin is not a terminal and --non-interactive is missing', async () => {
    const r = await runCli(['provision'], { input: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('CLI_USAGE: provision asks questions but stdin is not a terminal');
    expect(r.stderr).toContain('--non-interactive --config FILE --secrets FILE');
  });

  it('needs --config and --secrets with --non-interactive', async () => {
    const r = await runCli(['provision', '--non-interactive', '--config', join(dir, 'c.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--non-interactive needs --secrets FILE');
  });

  it('a re-run keeps every value not given, the secrets file included: --generate-ops-key alone adds the ops key', async () => {
    const config = join(dir, 'rerun.yaml');
    const secrets = join(dir, 'rerun-secrets.yaml');
    const first = await runCli([
      'provision',
      '--non-interactive',
      '--config',
      config,
      '--secrets',
      secrets,
      '--terminal',
      'gate-9',
      '--api',
      'http://127.0.0.1:9',
      '--api-key',
      'k9',
      '--no-check',
    ]);
    expect(first.code, first.stderr).toBe(0);
    const again = await runCli(['provision', '--non-interactive', '--config', config, '--generate-ops-key', '--no-check']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`a new ops key was generated: it is opsKey in ${secrets}`);
    const kept = loadSecrets({ file: secrets });
    expect(kept.opsKey).not.toBeNull();
    expect(kept.apiKey).toBe('k9');
    expect(readFileSync(config, 'utf8')).toContain('id: gate-9');
    expect(existsSync(join(dir, 'data', 'secrets.yaml'))).toBe(false);
  });

  it('shows every failed check with its own hint, true for a one-shot command (no "retried later"; https on an http port: use http://)', async () => {
    const svc = await startService();
    try {
      const secretFile = join(dir, 'checks-api-secret');
      writeFileSync(secretFile, svc.apiSecret, { mode: 0o600 });
      const https = svc.url.replace(/^http:/, 'https:');
      const r = await runCli([
        'provision',
        '--non-interactive',
        '--config',
        join(dir, 'checks.yaml'),
        '--secrets',
        join(dir, 'checks-secrets.yaml'),
        '--terminal',
        'gate-10',
        '--api',
        https,
        '--api-key',
        svc.apiKey,
        '--api-secret-file',
        secretFile,
        '--mqtt',
        'mqtt://127.0.0.1:9',
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('PROVISION_CHECK_FAILED: nothing written: api-token: ');
      expect(r.stderr).toContain('; mqtt: ');
      // Both hints, the API's first: the URL to use instead.
      expect(r.stderr).toMatch(
        new RegExp(`hint: api-token: .*use ${svc.url.replace(/[.:/]/g, '\\$&')}.*; mqtt: .+; fix these 2 and run again`),
      );
      expect(r.stderr).not.toMatch(/retried later|is retried/);
      expect(existsSync(join(dir, 'checks.yaml'))).toBe(false);
    } finally {
      await svc.stop();
    }
  });

  it('names a bad value with its key and writes nothing', async () => {
    const config = join(dir, 'bad.yaml');
    const r = await runCli([
      'provision',
      '--non-interactive',
      '--config',
      config,
      '--secrets',
      join(dir, 'bad-secrets.yaml'),
      '--mode',
      'sideways',
      '--no-check',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONFIG_BAD_ENUM');
    expect(r.stderr).toContain('terminal.mode');
    expect(existsSync(config)).toBe(false);
    const tz = await runCli([
      'provision',
      '--non-interactive',
      '--config',
      config,
      '--secrets',
      join(dir, 'bad-secrets.yaml'),
      '--timezone',
      'Mars/Olympus',
      '--no-check',
    ]);
    expect(tz.stderr).toContain('terminal.timeZone');
  });

  it('writes an offline setup with --no-check and says the checks did not run', async () => {
    const config = join(dir, 'offline.yaml');
    const r = await runCli([
      'provision',
      '--non-interactive',
      '--config',
      config,
      '--secrets',
      join(dir, 'offline-secrets.yaml'),
      '--terminal',
      'bench-1',
      '--api',
      'http://127.0.0.1:9',
      '--api-key',
      'k1',
      '--no-check',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('checks: not run (--no-check)');
    expect(r.stdout).toMatch(/API key\s+set \(2 characters\)/);
    expect(readFileSync(config, 'utf8')).toContain('id: bench-1');
    // no --data: the data folder goes next to the config (it would be /var/lib/edge-agent for /etc)
    expect(readFileSync(config, 'utf8')).toContain(`dataDir: ${join(dir, 'data')}`);
  });

  it('takes the template and site keys from files and never prints them', async () => {
    const keyFile = join(dir, 'template.key');
    const siteFile = join(dir, 'site.key');
    const key = 'ab'.repeat(32);
    const site = 'cd'.repeat(32);
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    writeFileSync(siteFile, site, { mode: 0o600 });
    const secretsFile = join(dir, 'keys-secrets.yaml');
    const r = await runCli([
      'provision',
      '--non-interactive',
      '--config',
      join(dir, 'keys.yaml'),
      '--secrets',
      secretsFile,
      '--template-key-file',
      keyFile,
      '--site-key-file',
      siteFile,
      '--no-check',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/template key\s+set \(256-bit key\)/);
    expect(r.stdout).not.toContain('(a new template key was generated)');
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain(site);
    const s = loadSecrets({ file: secretsFile, credentialsDir: null });
    expect(s.templateKey!.toString('hex')).toBe(key);
    expect(s.siteKey!.toString('hex')).toBe(site);
    writeFileSync(keyFile, 'short');
    const bad = await runCli([
      'provision',
      '--non-interactive',
      '--config',
      join(dir, 'keys.yaml'),
      '--secrets',
      secretsFile,
      '--template-key-file',
      keyFile,
      '--no-check',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('SECRETS_BAD_KEY');
  });

  it('writes the ops keys (site and operators) into the 0600 secrets, generates one on request, never prints them, and says where they are', async () => {
    const opsFile = join(dir, 'ops.key');
    const aliceFile = join(dir, 'alice.key');
    const ops = 'ef'.repeat(32);
    const alice = '12'.repeat(32);
    writeFileSync(opsFile, `${ops}\n`, { mode: 0o600 });
    writeFileSync(aliceFile, alice, { mode: 0o600 });
    const secretsFile = join(dir, 'ops-secrets.yaml');
    const config = join(dir, 'ops.yaml');
    const base = [
      'provision',
      '--non-interactive',
      '--config',
      config,
      '--secrets',
      secretsFile,
      '--mqtt',
      'mqtt://127.0.0.1:9',
      '--no-check',
    ];
    const none = await runCli(base);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/ops key\s+\(not set\): MQTT commands are refused until one is set/);
    const r = await runCli([...base, '--ops-key-file', opsFile, '--operator-key', `alice=${aliceFile}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ops key\s+set \(256-bit key\); operator keys: alice/);
    expect(r.stdout + r.stderr).not.toContain(ops);
    expect(r.stdout + r.stderr).not.toContain(alice);
    let s = loadSecrets({ file: secretsFile, credentialsDir: null });
    expect(s.opsKey!.toString('hex')).toBe(ops);
    expect(s.opsKeys.alice!.toString('hex')).toBe(alice);
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    const gen = await runCli([...base, '--generate-ops-key', '--json']);
    expect(gen.code, gen.stderr).toBe(0);
    const out = JSON.parse(gen.stdout) as { generatedOpsKey: boolean; changed: string[] };
    expect(out.generatedOpsKey).toBe(true);
    expect(out.changed).toContain('opsKey');
    s = loadSecrets({ file: secretsFile, credentialsDir: null });
    expect(s.opsKey).toHaveLength(32);
    expect(s.opsKey!.toString('hex')).not.toBe(ops);
    expect(s.opsKeys.alice!.toString('hex')).toBe(alice); // kept
    expect(gen.stdout).not.toContain(s.opsKey!.toString('hex'));
    const both = await runCli([...base, '--generate-ops-key', '--ops-key-file', opsFile]);
    expect(both.code).toBe(2);
    const badId = await runCli([...base, '--operator-key', `site=${aliceFile}`]);
    expect(badId.code).toBe(2);
    expect(badId.stderr).toContain('--operator-key');
  });
});

describe('edge-agent provision and stored templates', { timeout: 60_000 }, () => {
  it('refuses a template key that does not open the templates already stored, and keeps the one that does', async () => {
    const data = join(dir, 'tk-data');
    const stored = generateKey();
    const db = await openAgentDatabase(data);
    await TemplateCache.open(db, { key: stored });
    await db.close();
    const other = join(dir, 'other.key');
    const right = join(dir, 'right.key');
    writeFileSync(other, generateKey().toString('hex'), { mode: 0o600 });
    writeFileSync(right, stored.toString('hex'), { mode: 0o600 });
    const args = [
      'provision',
      '--non-interactive',
      '--config',
      join(dir, 'tk.yaml'),
      '--secrets',
      join(dir, 'tk-secrets.yaml'),
      '--data',
      data,
      '--no-check',
    ];
    const bad = await runCli([...args, '--template-key-file', other]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('PROVISION_TEMPLATE_KEY_MISMATCH');
    expect(existsSync(join(dir, 'tk.yaml'))).toBe(false);
    // no key given and none in the secrets: a generated key would not open them either
    expect((await runCli(args)).stderr).toContain('PROVISION_TEMPLATE_KEY_MISMATCH');
    const good = await runCli([...args, '--template-key-file', right]);
    expect(good.code, good.stderr).toBe(0);
    expect(loadSecrets({ file: join(dir, 'tk-secrets.yaml'), credentialsDir: null }).templateKey!.equals(stored)).toBe(true);
  });
});

describe.skipIf(!has('socat'))('edge-agent provision --discover-port, a module on a real pty (needs socat)', { timeout: 60_000 }, () => {
  let service: InProcessService;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('finds the scanner on a port by probing (a simulated R30x on a pty) and configures it', async () => {
    const secretFile = join(dir, 'disc-api-secret');
    writeFileSync(secretFile, service.apiSecret, { mode: 0o600 });
    const api = ['--api', service.url, '--client-id', service.clientId, '--api-key', service.apiKey, '--api-secret-file', secretFile];
    const sim = spawnCli(['simulate', 'r30x', '--link', join(dir, 'ttyDISC')]);
    try {
      const device = (await waitForLine(sim, /device: (\S+)/, 45_000))[1]!;
      const config = join(dir, 'disc.yaml');
      const r = await runCli([
        'provision',
        '--non-interactive',
        '--config',
        config,
        '--secrets',
        join(dir, 'disc-secrets.yaml'),
        ...api,
        '--discover-port',
        device,
        '--json',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { checks: Array<{ name: string; status: string }>; summary: Record<string, string> };
      expect(out.summary.scanners).toBe(`r30x:${device}:57600`);
      expect(out.checks.map((c) => [c.name, c.status])).toEqual([
        ['api-token', 'pass'],
        ['mqtt', 'warn'],
        [`scanner r30x:${device}`, 'pass'],
      ]);
      const empty = await runCli([
        'provision',
        '--non-interactive',
        '--config',
        join(dir, 'disc2.yaml'),
        '--secrets',
        join(dir, 'disc2-secrets.yaml'),
        '--discover-port',
        join(dir, 'no-such-port'),
      ]);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toContain('PROVISION_NOTHING_FOUND');
      expect(existsSync(join(dir, 'disc2.yaml'))).toBe(false);
    } finally {
      sim.kill('SIGTERM');
    }
  });
});

describe('provision logic', () => {
  it('parses --scanner family:path[:baud] and names what is wrong', () => {
    expect(parseScannerSpec('r30x:/dev/fingerprint0:57600')).toEqual({ family: 'r30x', path: '/dev/fingerprint0', baud: 57600 });
    expect(parseScannerSpec('gt521:/dev/ttyUSB0')).toEqual({ family: 'gt521', path: '/dev/ttyUSB0' });
    expect(parseScannerSpec('iris-hid:/dev/hidraw0')).toEqual({ family: 'iris-hid', path: '/dev/hidraw0' });
    expect(() => parseScannerSpec('r31x:/dev/ttyUSB0')).toThrow(AgentError);
    expect(() => parseScannerSpec('/dev/ttyUSB0')).toThrow(/family:path/);
    // A badge reader's line format comes last, with or without a baud rate.
    expect(parseScannerSpec('badge-serial:/dev/ttyUSB1:9600:em4100-hex')).toEqual({
      family: 'badge-serial',
      path: '/dev/ttyUSB1',
      baud: 9600,
      format: 'em4100-hex',
    });
    expect(parseScannerSpec('badge-hid:/dev/hidraw2:wiegand26')).toEqual({
      family: 'badge-hid',
      path: '/dev/hidraw2',
      format: 'wiegand26',
    });
    expect(() => parseScannerSpec('r30x:/dev/ttyUSB0:57600:wiegand26')).toThrow(/format: is the line format of a badge reader/);
    expect(() => parseScannerSpec('badge-hid:/dev/hidraw2:em4100-hex')).toThrow(/cannot type/);
  });

  it('keeps what is not given, bumps configVersion, generates a template key once', () => {
    const config = join(dir, 'merge.yaml');
    writeFileSync(config, 'configVersion: 4\nterminal:\n  id: gate-1\n  site: s1\nupstream: [api]\napi:\n  url: http://a.example\n');
    const existing = readExisting(config, join(dir, 'none.yaml'));
    const m = mergeSetup(existing, { mqttUrl: 'mqtt://b.example', apiSecret: 'sec' }, { secretsFile: join(dir, 's.yaml') });
    expect(m.config.configVersion).toBe(5);
    expect(m.config.terminal.id).toBe('gate-1');
    // A broker URL alone is monitoring: punches keep going to the API only.
    expect(m.config.upstream).toEqual(['api']);
    expect(m.generatedTemplateKey).toBe(true);
    expect(m.changed).toEqual(expect.arrayContaining(['mqtt.url', 'apiSecret', 'templateKey']));
    expect(m.changed).not.toContain('upstream');
    const again = mergeSetup({ raw: m.raw, secrets: m.secrets, exists: true }, {}, { secretsFile: join(dir, 's.yaml') });
    expect(again.generatedTemplateKey).toBe(false);
    expect(again.secrets.templateKey!.equals(m.secrets.templateKey!)).toBe(true);
    expect(again.changed).toEqual([]);
    expect(
      mergeSetup({ raw: {}, secrets: emptySecrets(), exists: false }, { upstream: ['mqtt'], mqttUrl: 'mqtt://x' }, { secretsFile: 's' })
        .config.upstream,
    ).toEqual(['mqtt']);
    expect(
      mergeSetup({ raw: {}, secrets: emptySecrets(), exists: false }, { mqttUrl: 'mqtt://x' }, { secretsFile: 's' }).raw.upstream,
    ).toBeUndefined();
    // Removing the broker takes mqtt out of the delivery targets it was in.
    const both = mergeSetup(
      { raw: { upstream: ['api', 'mqtt'], api: { url: 'http://a' }, mqtt: { url: 'mqtt://b' } }, secrets: emptySecrets(), exists: true },
      { mqttUrl: null },
      { secretsFile: 's' },
    );
    expect(both.config.upstream).toEqual(['api']);
    expect(defaultDataDir('/etc/edge-agent/config.yaml')).toBe('/var/lib/edge-agent');
    expect(defaultDataDir('/srv/t1/config.yaml')).toBe('/srv/t1/data');
  });
});
