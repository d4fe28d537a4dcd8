/**
 * The technician's and the site's management from the CLI, against the real service and a real
 * broker: the one rule that finds the configuration (and the refusal when there is none), users
 * add/list/remove through the API, keys create/list/revoke on the service database, the
 * destructive commands that ask (or take --yes), queue retry of an id that is not a dead letter,
 * and fleet --check for cron.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { loadConfig } from '../../src/config/load.js';
import { openOutbox } from '../../src/daemon/components/outbox.js';
import { CommandRouter } from '../../src/ops/commands.js';
import { keyringOf, OpsAuthenticator } from '../../src/ops/ops-auth.js';
import { TerminalOps } from '../../src/ops/terminal-ops.js';
import { runCli } from '../helpers/cli.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { nextMessage } from '../helpers/mqtt.js';

let service: InProcessService;
let dir: string;
let config: string;

beforeAll(async () => {
  service = await startService();
  dir = mkdtempSync(join(tmpdir(), 'cli-mgmt-'));
  const secrets = join(dir, 'secrets.yaml');
  writeFileSync(secrets, `apiKey: ${service.apiKey}\napiSecret: ${service.apiSecret}\ntemplateKey: ${'ab'.repeat(32)}\n`, { mode: 0o600 });
  config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `terminal: {id: gate-9, site: plant-m, timeZone: Europe/Berlin}\napi: {url: ${service.url}, clientId: ${service.clientId}}\nsecretsFile: secrets.yaml\n`,
  );
});
afterAll(async () => {
  await service?.stop();
});

describe('one rule to find the configuration', () => {
  const none = {
    EDGE_AGENT_CONFIG: '',
    EDGE_AGENT_TEST_INSTALLED_CONFIG: '/nonexistent/edge-agent/config.yaml',
    EDGE_AGENT_TEST_DEMO_CONFIG: '',
  };

  it('punch and queue status run from another folder refuse without a configuration, name where they looked, and create nothing', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'elsewhere-'));
    const [punch, status] = await Promise.all([
      runCli(['punch', '--code', 'E1'], { cwd: elsewhere, env: none }),
      runCli(['queue', 'status'], { cwd: elsewhere, env: none }),
    ]);
    for (const [r, cmd] of [
      [punch, 'punch'],
      [status, 'queue'],
    ] as const) {
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toContain(
        `CONFIG_NONE: edge-agent ${cmd} needs this terminal's configuration and found none; looked at: --config (not given), $EDGE_AGENT_CONFIG (not set), /nonexistent/edge-agent/config.yaml (does not exist)`,
      );
      expect(r.stderr).toMatch(/hint: pass --config FILE or set EDGE_AGENT_CONFIG/);
    }
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
  }, 60_000);

  it("the installed config (the path the unit names) is found without --config, and its data folder is the config's", async () => {
    const r = await runCli(['punch', '--code', 'E1', '--at', '2026-03-02 08:00:00', '--json'], {
      cwd: mkdtempSync(join(tmpdir(), 'elsewhere-')),
      env: { ...none, EDGE_AGENT_TEST_INSTALLED_CONFIG: config },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ recorded: true, tzOffset: 60 }); // Europe/Berlin in March: the config's zone
    expect(existsSync(join(dir, 'data', 'agent.db'))).toBe(true); // `data` beside the config, wherever the command ran
  }, 60_000);

  it("in a checkout, the embedded demo's config is used only as the last resort, and it says so", async () => {
    const r = await runCli(['queue', 'status', '--json'], { env: { ...none, EDGE_AGENT_TEST_DEMO_CONFIG: config } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`no configuration given: using the embedded demo's ${config} (in a checkout only`);
    expect(JSON.parse(r.stdout).pending).toBe(1);
  }, 60_000);
});

describe('users and keys from the CLI', () => {
  it("adds, lists and removes an employee through the API with the terminal's key; remove asks first", async () => {
    const add = await runCli(['users', 'add', 'E2001', '--first-name', 'Ada', '--last-name', 'Lovelace', '--config', config]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toBe('added E2001  Ada Lovelace  active\nnext: edge-agent enroll E2001\n');
    const list = await runCli(['users', 'list', 'E2001', 'NOBODY', '--config', config, '--json']);
    expect(list.code).toBe(1); // one code is unknown
    expect(JSON.parse(list.stdout)).toMatchObject({ users: [{ employeeCode: 'E2001', firstName: 'Ada' }], unknown: ['NOBODY'] });

    const asked = await runCli(['users', 'remove', 'E2001', '--config', config]);
    expect(asked.code).toBe(1);
    expect(asked.stderr).toMatch(
      /CLI_CONFIRM_NEEDED: users remove deletes what cannot be brought back and asks first, but stdin is not a terminal: nothing was deleted\n {2}hint: add --yes/,
    );
    const removed = await runCli(['users', 'remove', 'E2001', '--yes', '--config', config]);
    expect(removed.code, removed.stderr).toBe(0);
    const gone = await runCli(['users', 'remove', 'E2001', '--yes', '--config', config]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/CLI_SERVICE_REFUSED: removing E2001: the attendance service answered USER_NOT_AVAILABLE/);
  }, 90_000);

  it('keys create refuses a database that is not there unless --create; list shows no secret; revoke asks, then the key is refused', async () => {
    const typo = join(dir, 'servce.db');
    const refused = await runCli(['keys', 'create', '--db', typo, '--role', 'admin']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`CLI_DB_MISSING: there is no service database at ${typo}: nothing was created`);
    expect(existsSync(typo)).toBe(false);

    const made = await runCli(['keys', 'create', '--db', service.dbPath, '--role', 'admin-audit', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const pair = JSON.parse(made.stdout) as { apiKey: string; apiSecret: string };
    const list = await runCli(['keys', 'list', '--db', service.dbPath, '--json']);
    const keys = (JSON.parse(list.stdout) as { keys: Array<{ apiKey: string; role: string }> }).keys;
    expect(keys.map((k) => k.apiKey)).toEqual(expect.arrayContaining([service.apiKey, pair.apiKey]));
    expect(list.stdout).not.toContain(pair.apiSecret);

    const client = new AttendanceClient({
      baseUrl: service.url,
      clientId: service.clientId,
      apiKey: pair.apiKey,
      apiSecret: pair.apiSecret,
    });
    await client.getToken();
    expect((await runCli(['keys', 'revoke', pair.apiKey, '--db', service.dbPath])).stderr).toContain('CLI_CONFIRM_NEEDED');
    const revoked = await runCli(['keys', 'revoke', pair.apiKey, '--db', service.dbPath, '--yes']);
    expect(revoked.stdout).toBe(`revoked ${pair.apiKey} and its tokens\n`);
    const fresh = new AttendanceClient({
      baseUrl: service.url,
      clientId: service.clientId,
      apiKey: pair.apiKey,
      apiSecret: pair.apiSecret,
    });
    await expect(fresh.getToken()).rejects.toMatchObject({ code: 'API_AUTH_FAILED' });
    const again = await runCli(['keys', 'revoke', pair.apiKey, '--db', service.dbPath, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`CLI_NOT_FOUND: no API key ${pair.apiKey}`);
  }, 90_000);
});

describe('the outbox asks before it deletes and says what an id is', () => {
  it('queue retry --id of an unknown or undelivered punch says so; purge --dead asks or takes --yes', async () => {
    const data = join(dir, 'q');
    mkdirSync(data, { recursive: true });
    const common = ['--config', config, '--data', data];
    const p = await runCli(['punch', '--code', 'E7', '--at', '2026-03-03 08:00:00', '--json', ...common]);
    const { id } = JSON.parse(p.stdout) as { id: string };
    const [unknown, pending] = await Promise.all([
      runCli(['queue', 'retry', '--id', 'NOPE', ...common]),
      runCli(['queue', 'retry', '--id', id, '--json', ...common]),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('NOPE: no such punch in this outbox (ids: edge-agent queue list --dead)\n');
    expect(pending.code).toBe(1);
    expect(JSON.parse(pending.stdout)).toEqual({ retried: 0, unknown: [], notDead: [{ id, state: 'pending' }] });
    const nothing = await runCli(['queue', 'purge', '--dead', ...common]);
    expect(nothing.stdout).toBe('no dead letters to delete\n');

    // The service refuses the punch for good: a dead letter, which purge --dead deletes only when told.
    const { db, outbox } = await openOutbox(loadConfig({ file: config, env: {}, overrides: { dataDir: data } }));
    try {
      const [item] = await outbox.nextBatch('api', 10);
      await outbox.applyResults('api', [{ seq: item!.seq, outcome: 'dead', status: 'USER_NOT_AVAILABLE', error: 'no user E7' }]);
    } finally {
      await db.close();
    }
    const asked = await runCli(['queue', 'purge', '--dead', ...common]);
    expect(asked.code).toBe(1);
    expect(asked.stderr).toContain('CLI_CONFIRM_NEEDED: queue purge --dead deletes what cannot be brought back');
    const retried = await runCli(['queue', 'retry', '--id', id, ...common]);
    expect(retried.stdout).toBe('1 dead letter(s) queued again; the running agent delivers them\n');
    const db2 = await openOutbox(loadConfig({ file: config, env: {}, overrides: { dataDir: data } }));
    try {
      const [again] = await db2.outbox.nextBatch('api', 10);
      await db2.outbox.applyResults('api', [{ seq: again!.seq, outcome: 'dead', status: 'USER_NOT_AVAILABLE', error: 'no user E7' }]);
    } finally {
      await db2.db.close();
    }
    const purged = await runCli(['queue', 'purge', '--dead', '--yes', ...common]);
    expect(purged.stdout).toBe('deleted 1 dead letter(s)\n');
  }, 90_000);
});

describe('fleet --check for cron and Nagios-style checks', () => {
  let broker: TestBroker;
  const ops: TerminalOps[] = [];
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(async () => {
    for (const o of ops) await o.stop();
    await broker?.stop();
  });

  const terminal = (name: string, metrics: Record<string, unknown>) => {
    const o = new TerminalOps({
      url: broker.url,
      base: { prefix: 'chk', site: 's1', terminal: name },
      info: () => ({ version: '1' }),
      metrics: () => metrics,
      metricsIntervalMs: 60_000,
      router: new CommandRouter(
        new OpsAuthenticator({
          site: 's1',
          terminal: name,
          keyring: keyringOf({ opsKey: randomBytes(32), opsKeys: {} }),
          windowMs: 300_000,
        }),
      ),
    });
    ops.push(o);
    return o;
  };

  it('exits 0 while every terminal is healthy and 1 once one is degraded, naming it and why', async () => {
    const empty = await runCli(['fleet', '--check', '--mqtt', broker.url, '--prefix', 'chk']);
    expect(empty.code).toBe(1);
    expect(empty.stdout).toMatch(/^CRITICAL: no terminal has reported/m);

    await terminal('gate-1', { health: 'ok', degraded: [], scanners: [{ key: 'r30x:/dev/fingerprint0', status: 'ready' }] }).start(5000);
    await nextMessage(broker.url, 'chk/s1/gate-1/metrics');
    const ok = await runCli(['fleet', '--check', '--mqtt', broker.url, '--prefix', 'chk']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/gate-1 +online +\S+ ago +1\/1 ready/);
    expect(ok.stdout).toMatch(/^OK: 1 terminal\(s\), none lost or degraded$/m);

    await terminal('gate-2', {
      health: 'degraded',
      degraded: ['scanner r30x:/dev/fingerprint0 disconnected'],
      scanners: [{ key: 'r30x:/dev/fingerprint0', status: 'disconnected' }],
      lastError: 'AGENT_SCANNER_DISCONNECTED: unplugged',
      lastErrorAt: new Date().toISOString(),
    }).start(5000);
    await nextMessage(broker.url, 'chk/s1/gate-2/metrics');
    const bad = await runCli(['fleet', '--check', '--mqtt', broker.url, '--prefix', 'chk', '--json']);
    expect(bad.code).toBe(1);
    const out = JSON.parse(bad.stdout) as {
      check: { ok: boolean; problems: Array<{ terminal: string; status: string; why: string }> };
      terminals: Array<{ terminal: string; status: string }>;
    };
    expect(out.check.problems).toEqual([
      { site: 's1', terminal: 'gate-2', status: 'degraded', why: 'scanner r30x:/dev/fingerprint0 disconnected' },
    ]);
    expect(out.terminals.map((t) => [t.terminal, t.status])).toEqual([
      ['gate-1', 'online'],
      ['gate-2', 'degraded'],
    ]);
  }, 90_000);
});
