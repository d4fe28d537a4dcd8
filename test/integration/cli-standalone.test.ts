/**
 * Central and operator commands on a machine that is not a terminal: no /etc/edge-agent, no
 * $EDGE_AGENT_CONFIG, not a checkout (no demo config), HOME and the working folder in a temp
 * folder. `console --mqtt`, `ingest --mqtt --api ...` (as docs/central.md writes it), `ops send
 * --key-file ...`, `users`, `keys` and `serve` start and work from their flags against a real
 * broker and the real service on loopback; a missing flag is named as the flag. In a checkout, the
 * embedded demo's config is used only when the flags leave something out, and then said on stderr,
 * with the key id `ops send` signs with.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import mqtt from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { CommandRouter } from '../../src/ops/commands.js';
import { keyringOf, OpsAuthenticator } from '../../src/ops/ops-auth.js';
import { OPS_ARGUMENTS } from '../../src/ops/ops-router.js';
import { TerminalOps } from '../../src/ops/terminal-ops.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { killTree, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { docCommand } from '../helpers/doc-commands.js';
import { startService, type InProcessService } from '../helpers/service.js';

const OPS_KEY = randomBytes(32);

describe('central and operator commands on a machine with no terminal configuration', () => {
  let broker: TestBroker;
  let svc: InProcessService;
  let ops: TerminalOps;
  let home: string;
  let keyFile: string;
  let secretFile: string;
  /** An operator's workstation: nothing to find, run from a folder of its own. */
  let operator: { cwd: string; env: NodeJS.ProcessEnv };
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    broker = await startBroker();
    svc = await startService();
    home = mkdtempSync(join(tmpdir(), 'operator-home-'));
    mkdirSync(join(home, '.edge-agent'));
    keyFile = join(home, '.edge-agent', 'plant-a.key');
    writeFileSync(keyFile, `${OPS_KEY.toString('hex')}\n`, { mode: 0o600 });
    secretFile = join(home, 'api-secret');
    writeFileSync(secretFile, svc.apiSecret, { mode: 0o600 });
    operator = {
      cwd: home,
      env: {
        HOME: home,
        EDGE_AGENT_CONFIG: '',
        EDGE_AGENT_TEST_INSTALLED_CONFIG: join(home, 'etc', 'edge-agent', 'config.yaml'),
        EDGE_AGENT_TEST_DEMO_CONFIG: '',
      },
    };
    // A terminal on the broker that answers commands signed with the site's key.
    const auth = new OpsAuthenticator({
      site: 'plant-a',
      terminal: 'gate-7',
      keyring: keyringOf({ opsKey: OPS_KEY, opsKeys: {} }),
      windowMs: 300_000,
    });
    ops = new TerminalOps({
      url: broker.url,
      base: { prefix: 'attendance', site: 'plant-a', terminal: 'gate-7' },
      info: () => ({ version: '9.9.9', clock: { synchronized: true } }),
      metrics: () => ({ queue: { pending: 0, dead: 0, delivered: 3, oldestPendingAgeSec: null } }),
      metricsIntervalMs: 500,
      router: new CommandRouter(auth)
        .register('ping', () => ({ pong: true }))
        .register('delete-user', (args) => ({ employeeCode: args.employeeCode, templatesRemoved: 0 }), OPS_ARGUMENTS['delete-user']),
    });
    await ops.start(5000);
  }, 60_000);
  afterEach(() => {
    for (const c of children.splice(0)) killTree(c);
  });
  afterAll(async () => {
    await ops?.stop();
    await svc?.stop();
    await broker?.stop();
  });

  it('console --mqtt URL (the first line of docs/console.md) serves the fleet read-only', async () => {
    const words = docCommand('docs/console.md', 'console --mqtt');
    expect(words).toEqual(['console', '--mqtt', 'mqtt://broker:1883']);
    const child = spawnCli([...words.map((w) => (w === 'mqtt://broker:1883' ? broker.url : w)), '--port', '0'], operator);
    children.push(child);
    const [, url] = await waitForLine(child, /console listening on (http:\/\/\S+) /, 30_000, 'stdout');
    const deadline = Date.now() + 20_000;
    let fleet: { terminals?: Array<{ terminal: string }> } = {};
    while (Date.now() < deadline) {
      fleet = (await (await fetch(new URL('/api/fleet', url))).json()) as typeof fleet;
      if (JSON.stringify(fleet).includes('gate-7')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(JSON.stringify(fleet)).toContain('gate-7');
  }, 60_000);

  it('ingest as docs/central.md writes it (--mqtt, --api, --api-key, --api-secret-file, --secrets) takes a published punch into the service', async () => {
    const api = new AttendanceClient({ baseUrl: svc.url, clientId: svc.clientId, apiKey: svc.apiKey, apiSecret: svc.apiSecret });
    await api.addOrUpdateUser({ employeeCode: 'E77', firstName: 'Op', lastName: 'Erator' });
    const words = docCommand('docs/central.md', 'ingest');
    // The doc's hosts and files, on this machine: loopback, and the files of the operator's folder
    // (the broker here needs no credentials: ingest-secrets.yaml does not exist, which is allowed).
    const here: Record<string, string> = {
      'mqtts://broker.example.com:8883': broker.url,
      'http://attendance-lb:8080': svc.url,
      'THE-API-KEY': svc.apiKey,
      '/etc/edge-agent/ingest-api-secret': secretFile,
      '/etc/edge-agent/ingest-secrets.yaml': join(home, 'ingest-secrets.yaml'),
      'ingest-$(hostname)': `ingest-standalone-${process.pid}`,
      '9464': '0',
    };
    for (const k of Object.keys(here)) expect(words).toContain(k);
    let args = words.map((w) => here[w] ?? w);
    // The doc's `--group` is a $share subscription: Mosquitto (the full tier) has them; the
    // in-process aedes broker of a fresh machine does not deliver on one, so there the same
    // line runs with the group's words replaced by --no-share --connections 1 (its own subscription).
    if (broker.kind === 'aedes') {
      const at = args.indexOf('--group');
      expect(at).toBeGreaterThan(0);
      args = [...args.slice(0, at), '--no-share', '--connections', '1', ...args.slice(at + 2)];
    }
    const child = spawnCli([...args, '--session-expiry', '0'], operator);
    children.push(child);
    await waitForLine(child, /metrics on http/, 30_000, 'stdout');
    const pub = await mqtt.connectAsync(broker.url);
    await pub.publishAsync(
      'attendance/plant-a/gate-7/events',
      JSON.stringify({
        id: `01STANDALONE${process.pid}`,
        terminal: 'gate-7',
        site: 'plant-a',
        employeeCode: 'E77',
        direction: 'in',
        time: '2024-09-02 08:00:00',
        tzOffset: 60,
        inTime: null,
        shift: null,
        source: 'finger',
        score: 0.9,
        clockSynced: true,
        clockCorrected: false,
        recordedAt: new Date().toISOString(),
      }),
      { qos: 1 },
    );
    await pub.endAsync();
    const deadline = Date.now() + 20_000;
    let events: unknown[] = [];
    while (Date.now() < deadline && events.length === 0) {
      events = (await api.getEvents({ from: '2024-09-02 00:00:00', to: '2024-09-02 23:59:59' })).returnValue ?? [];
      if (events.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(events).toHaveLength(1);
  }, 60_000);

  it('ops send --key-file F (as docs/operator.md writes it) signs with the key it names and gets the answer; a wrong key is named with its id', async () => {
    const words = docCommand('docs/operator.md', 'ops send');
    expect(words).toContain('~/.edge-agent/plant-a.key');
    // What the shell makes of the line: ~ is HOME; the broker is this one.
    const args = words.map((w) => (w === 'mqtt://broker:1883' ? broker.url : w.replace(/^~\//, `${home}/`)));
    const ok = await runCli(args, operator);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok: delete-user on plant-a\/gate-7/);
    expect(ok.stdout).toContain('"employeeCode": "E1001"');
    expect(ok.stderr).toContain(`signing delete-user for plant-a/gate-7 with key id site (--key-file ${keyFile})`);
    const other = join(home, 'other.key');
    writeFileSync(other, randomBytes(32).toString('hex'), { mode: 0o600 });
    const refused = await runCli(
      ['ops', 'send', '--mqtt', broker.url, '--site', 'plant-a', '--terminal', 'gate-7', '--key-file', other, '--key-id', 'alice', 'ping'],
      operator,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/OPS_UNAUTHENTICATED: .*\(signed with key id alice, --key-file .*other\.key\)/);
  }, 60_000);

  it('names the flag a command misses, never a terminal configuration', async () => {
    const [consoleNone, opsNoTerminal, opsNoKey, usersNone, usersNoSecret] = await Promise.all([
      runCli(['console'], operator),
      runCli(['ops', 'send', '--mqtt', broker.url, '--site', 'plant-a', '--key-file', keyFile, 'ping'], operator),
      runCli(['ops', 'send', '--mqtt', broker.url, '--site', 'plant-a', '--terminal', 'gate-7', 'ping'], operator),
      runCli(['users', 'add', 'E1', '--first-name', 'A', '--last-name', 'B'], operator),
      runCli(['users', 'list', 'E1', '--api', svc.url, '--api-key', svc.apiKey], operator),
    ]);
    const all = [consoleNone, opsNoTerminal, usersNone, usersNoSecret];
    for (const r of all) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).not.toContain('CONFIG_NONE');
      expect(r.stderr).not.toContain("terminal's configuration");
    }
    expect(consoleNone.stderr).toContain(
      'CLI_USAGE: edge-agent console needs --mqtt URL (the broker to read the fleet from); no configuration',
    );
    expect(opsNoTerminal.stderr).toContain('CLI_USAGE: edge-agent ops send needs --terminal ID');
    expect(usersNone.stderr).toContain('CLI_USAGE: edge-agent users add needs --api URL');
    expect(usersNoSecret.stderr).toContain('CLI_USAGE: edge-agent users list needs --api-secret-file FILE');
    expect(opsNoKey.code).toBe(1);
    expect(opsNoKey.stderr).toContain('OPS_NO_KEY');
    expect(opsNoKey.stderr).toMatch(/hint: pass --key-file FILE/);
  }, 60_000);

  it('users, keys and serve run from their flags alone', async () => {
    const users = await runCli(
      [
        'users',
        'add',
        'E88',
        '--first-name',
        'Ada',
        '--last-name',
        'L',
        '--api',
        svc.url,
        '--api-key',
        svc.apiKey,
        '--api-secret-file',
        secretFile,
      ],
      operator,
    );
    expect(users.code, users.stderr).toBe(0);
    expect(users.stdout).toContain('added E88  Ada L');
    const db = join(home, 'service.db');
    const keys = await runCli(['keys', 'create', '--db', db, '--create', '--role', 'admin', '--json'], operator);
    expect(keys.code, keys.stderr).toBe(0);
    expect(JSON.parse(keys.stdout)).toMatchObject({ role: 'admin' });
    const serve = spawnCli(['serve', '--db', db, '--port', '0'], operator);
    children.push(serve);
    const [, url] = await waitForLine(serve, /listening on (http:\/\/\S+)/, 30_000, 'stdout');
    const key = JSON.parse(keys.stdout) as { apiKey: string; apiSecret: string };
    const client = new AttendanceClient({ baseUrl: url!, clientId: 'edge-agent', apiKey: key.apiKey, apiSecret: key.apiSecret });
    expect((await client.getUser('nobody')).statusCode).toBe('USER_NOT_AVAILABLE');
  }, 60_000);

  it("in a checkout: the demo's config only when the flags leave something out, and then said, with the key id", async () => {
    const demoDir = join(home, 'checkout-data');
    mkdirSync(demoDir, { recursive: true });
    const demoSecrets = join(demoDir, 'secrets.yaml');
    writeFileSync(demoSecrets, `opsKey: ${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const demo = join(demoDir, 'embedded-config.yaml');
    writeFileSync(demo, `mqtt:\n  url: ${broker.url}\nsecretsFile: ${demoSecrets}\n`);
    const inCheckout = { ...operator, env: { ...operator.env, EDGE_AGENT_TEST_DEMO_CONFIG: demo } };
    const complete = await runCli(
      ['ops', 'send', '--mqtt', broker.url, '--site', 'plant-a', '--terminal', 'gate-7', '--key-file', keyFile, 'ping'],
      inCheckout,
    );
    expect(complete.code, complete.stderr).toBe(0);
    expect(complete.stderr).not.toContain('embedded demo');
    const partial = await runCli(['ops', 'send', '--site', 'plant-a', '--terminal', 'gate-7', 'ping'], inCheckout);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain(`using the embedded demo's ${demo}`);
    expect(partial.stderr).toContain(`with key id site (opsKey of ${demoSecrets} (the embedded demo's))`);
    expect(partial.stderr).toMatch(/OPS_UNAUTHENTICATED: .*\(signed with key id site, /);
  }, 60_000);
});
