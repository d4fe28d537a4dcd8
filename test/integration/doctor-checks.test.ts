import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { statfs } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../src/core/errors.js';
import { parseConfig } from '../../src/config/config.js';
import { checkApiToken } from '../../src/setup/doctor/api.js';
import { checkClock, checkClockFigures } from '../../src/setup/doctor/clock.js';
import { checkMqttConnection } from '../../src/setup/doctor/mqtt.js';
import { formatReport } from '../../src/setup/doctor/report.js';
import { runDoctor } from '../../src/setup/doctor/runner.js';
import { checkScanners } from '../../src/setup/doctor/scanners.js';
import { checkOpsKey, checkTemplateKey } from '../../src/setup/doctor/secrets.js';
import { checkDatabase, checkDisk } from '../../src/setup/doctor/storage.js';
import { emptySecrets, generateKey } from '../../src/config/secrets.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache, verifyTemplateKey } from '../../src/store/template-cache.js';
import { Outbox } from '../../src/store/outbox.js';
import { ClockStore } from '../../src/store/clock-store.js';
import { freePort } from '../helpers/broker.js';

const root = mkdtempSync(join(tmpdir(), 'doctor-'));
let n = 0;
const folder = () => {
  const d = join(root, `d${n++}`);
  mkdirSync(d, { recursive: true });
  return d;
};

describe('doctor checks on broken parts (real files, real sockets)', () => {
  it('database: integrity ok passes; a file that is not a database fails with a hint', async () => {
    const good = folder();
    const db = await openAgentDatabase(good);
    await Outbox.open(db);
    await db.close();
    expect(await checkDatabase(good)).toMatchObject({ name: 'database', status: 'pass' });

    const bad = folder();
    writeFileSync(join(bad, 'agent.db'), Buffer.alloc(8192, 0x5a));
    const r = await checkDatabase(bad);
    expect(r.status).toBe('fail');
    expect(r.detail).toContain('SQLITE_CORRUPT');
    expect(r.hint).toBeTruthy();
    expect((await checkDatabase(folder())).status).toBe('warn'); // no database yet
  });

  it('database: a damaged page inside a real database fails the integrity check', async () => {
    const dir = folder();
    const db = await openAgentDatabase(dir);
    await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB); CREATE INDEX t_v ON t (v);');
    await db.transaction(async (tx) => {
      for (let i = 0; i < 3000; i++) await tx.run('INSERT INTO t (v) VALUES (?)', [Buffer.from(`row-${i}-`.repeat(8))]);
    });
    await db.close(); // checkpoints the WAL into the main file
    const path = join(dir, 'agent.db');
    const { openSync, writeSync, closeSync, statSync } = await import('node:fs');
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, Math.floor(size / 2 / 4096) * 4096 + 8); // inside a b-tree page, not page 1
    closeSync(fd);
    const r = await checkDatabase(dir);
    expect(r.status).toBe('fail');
    expect(r.detail).toMatch(/integrity_check found \d+ problem|SQLITE_CORRUPT/);
  });

  it('template key: the right key passes, another key fails, none fails', async () => {
    const dir = folder();
    const key = generateKey();
    const db = await openAgentDatabase(dir);
    await TemplateCache.open(db, { key });
    await db.close();
    expect(await checkTemplateKey(dir, key, verifyTemplateKey)).toMatchObject({ status: 'pass' });
    const wrong = await checkTemplateKey(dir, generateKey(), verifyTemplateKey);
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toContain('key-check');
    expect((await checkTemplateKey(dir, null, verifyTemplateKey)).status).toBe('fail');
    expect((await checkTemplateKey(dir, key, null)).status).toBe('warn');
  });

  it('disk: fails below 64 MB, warns below 512 MB', async () => {
    const fake = (freeMb: number) =>
      (async () => ({ bavail: (freeMb * 1024 * 1024) / 4096, bsize: 4096, blocks: 1_000_000 })) as unknown as typeof statfs;
    expect((await checkDisk(root, fake(10))).status).toBe('fail');
    expect((await checkDisk(root, fake(300))).status).toBe('warn');
    expect((await checkDisk(root, fake(5000))).status).toBe('pass');
    expect((await checkDisk(join(root, 'not', 'yet'))).detail).toContain(root); // the nearest existing folder
  });

  it('API and MQTT: unreachable fails with the error code, not configured warns', async () => {
    const port = await freePort();
    const api = await checkApiToken({
      url: `http://127.0.0.1:${port}`,
      pathForm: 'api',
      clientId: 'edge-agent',
      timeoutMs: 2000,
      apiKey: 'k',
      apiSecret: 's',
    });
    expect(api.status).toBe('fail');
    expect(api.detail).toMatch(/^API_(NETWORK|TIMEOUT)/);
    expect(
      (await checkApiToken({ url: null, pathForm: 'api', clientId: 'x', timeoutMs: 1000, apiKey: null, apiSecret: null })).status,
    ).toBe('warn');
    // ... unless punches are meant to go there: then the agent could not even start
    expect(
      (await checkApiToken({ url: null, pathForm: 'api', clientId: 'x', timeoutMs: 1000, apiKey: null, apiSecret: null, required: true }))
        .status,
    ).toBe('fail');
    expect(
      (await checkMqttConnection({ config: parseConfig({ upstream: ['mqtt'] }), secrets: { mqttUsername: null, mqttPassword: null } }))
        .status,
    ).toBe('fail');
    expect(
      (
        await checkApiToken({
          url: `http://127.0.0.1:${port}`,
          pathForm: 'api',
          clientId: 'x',
          timeoutMs: 1000,
          apiKey: 'k',
          apiSecret: null,
        })
      ).status,
    ).toBe('fail');

    const config = parseConfig({ mqtt: { url: `mqtt://127.0.0.1:${port}` } });
    const mq = await checkMqttConnection({ config, secrets: { mqttUsername: null, mqttPassword: null }, timeoutMs: 2000 });
    expect(mq.status).toBe('fail');
    expect(mq.detail).toContain(`127.0.0.1:${port}`);
    expect((await checkMqttConnection({ config: parseConfig({}), secrets: { mqttUsername: null, mqttPassword: null } })).status).toBe(
      'warn',
    );
  });

  it('ops key: not needed without MQTT commands, a warning when they would all be refused, where it is when held', () => {
    const withMqtt = parseConfig({ mqtt: { url: 'mqtt://127.0.0.1:1883' } });
    expect(checkOpsKey(parseConfig({}), null).status).toBe('pass');
    expect(checkOpsKey(parseConfig({ mqtt: { url: 'mqtt://127.0.0.1:1883' }, ops: { enabled: false } }), null).detail).toContain(
      'ops.enabled is false',
    );
    const none = checkOpsKey(withMqtt, { ...emptySecrets() });
    expect(none.status).toBe('warn');
    expect(none.detail).toContain('OPS_UNAUTHENTICATED');
    expect(none.hint).toContain('--ops-key-file');
    const key = generateKey();
    const held = checkOpsKey(withMqtt, {
      ...emptySecrets(),
      opsKey: key,
      opsKeys: { alice: generateKey() },
      sources: { opsKey: '/etc/edge-agent/secrets.yaml', opsKeys: 'credential:ops-keys' },
    });
    expect(held.status).toBe('pass');
    expect(held.detail).toContain('opsKey (key id site) from /etc/edge-agent/secrets.yaml; opsKeys alice from credential:ops-keys');
    expect(held.detail).not.toContain(key.toString('hex'));
  });

  it('scanners: none configured warns, a scanner that does not answer fails, one held by the agent warns', async () => {
    expect((await checkScanners([], null))[0]!.status).toBe('warn');
    const s = [{ family: 'r30x' as const, path: '/dev/ttyUSB9' }];
    const failing = await checkScanners(s, async () => {
      throw new AgentError('TRANSPORT_NOT_FOUND', 'no such port /dev/ttyUSB9', {}, { hint: 'plug it in' });
    });
    expect(failing).toEqual([
      { name: 'scanner r30x:/dev/ttyUSB9', status: 'fail', detail: 'TRANSPORT_NOT_FOUND: no such port /dev/ttyUSB9', hint: 'plug it in' },
    ]);
    const probe = async () => ({ model: 'R503', firmware: null, serial: null });
    // While the agent runs it holds the port: its own view is judged instead of opening the port.
    expect((await checkScanners(s, probe, { daemonRunning: true }))[0]!.status).toBe('warn');
    expect(
      (await checkScanners(s, probe, { daemonRunning: true, held: [{ key: 'r30x:/dev/ttyUSB9', status: 'ready', model: 'R503' }] }))[0],
    ).toMatchObject({ status: 'pass', detail: 'answers (through the running agent): R503' });
    expect(
      (await checkScanners(s, probe, { daemonRunning: true, held: [{ key: 'r30x:/dev/ttyUSB9', status: 'disconnected' }] }))[0],
    ).toMatchObject({ status: 'fail', detail: 'the running agent cannot use it: disconnected' });
    expect((await checkScanners(s, async () => ({ model: 'R503', firmware: null, serial: null })))[0]).toMatchObject({
      status: 'pass',
      detail: 'answers: R503',
    });
  });

  it('clock: only a clock a time service calls synchronized passes', async () => {
    expect((await checkClock(async () => ({ synchronized: true, source: 'timedatectl', detail: 'yes' }))).status).toBe('pass');
    expect((await checkClock(async () => ({ synchronized: true, source: 'assumed', detail: '?' }))).status).toBe('warn');
    expect((await checkClock(async () => ({ synchronized: false, source: 'year', detail: '1970' }))).status).toBe('warn');
  });

  it('clock with the terminal database: a clock behind a time already trusted, held punches and the last step, in text and data', async () => {
    const config = parseConfig({ dataDir: folder() });
    const db = await openAgentDatabase(config.dataDir);
    const outbox = await Outbox.open(db);
    const store = await ClockStore.open(db);
    const seen = Date.now() + 3_600_000; // the terminal already trusted a time an hour ahead of this clock
    await db.transaction(async (tx) => {
      await store.writeJudgement(tx, { trusted: true, source: 'timedatectl', detail: 'yes', bootId: 'b1', monoMs: 1, lastTrustedMs: seen });
      await store.recordStep(tx, { sizeMs: -3_600_000, at: Date.UTC(2026, 5, 1, 7), bootId: 'b1' });
    });
    await outbox.record({
      employeeCode: 'A',
      direction: 'in',
      localTime: '2020-01-01 00:00:00',
      tzOffset: 0,
      source: 'finger',
      terminalId: 't',
      clockSynced: false,
      bootId: 'an-earlier-boot',
      monotonicMs: 1,
    });
    await db.close();
    const { result: r, figures } = await checkClockFigures(
      async () => ({ synchronized: true, source: 'timedatectl', detail: 'yes' }),
      config,
    );
    expect(r.status).toBe('warn');
    expect(r.detail).toMatch(/^NOT TRUSTED: the clock says .* earlier than .* already trusted/);
    expect(r.detail).toContain('1 of an earlier boot waiting for a decision');
    expect(r.detail).toContain('last step -3600 s at 2026-06-01T07:00:00.000Z (1 seen)');
    expect(r.hint).toContain('edge-agent queue release-unsynced');
    expect(figures).toMatchObject({
      trusted: false,
      source: 'seen',
      steps: 1,
      lastStep: { sizeSec: -3600 },
      held: { earlierBoot: 1 },
      alerts: [{ code: 'CLOCK_EARLIER_BOOT_HELD' }],
    });
  });

  it('a broken config fails doctor with the key named, and nothing after it passes', async () => {
    const file = join(folder(), 'c.yaml');
    writeFileSync(file, 'api:\n  ur1: http://x\n');
    const report = await runDoctor({
      config: { file, env: {} },
      detectClock: async () => ({ synchronized: false, source: 'year', detail: '1970' }),
    });
    expect(report.ok).toBe(false);
    expect(report.checks[0]).toMatchObject({ name: 'config', status: 'fail' });
    expect(report.checks[0]!.detail).toContain('CONFIG_UNKNOWN_KEY');
    expect(report.checks[0]!.detail).toContain('[key: api.ur1]');
    expect(report.checks[0]!.hint).toContain('did you mean "api.url"?');
    expect(report.checks.slice(1).every((c) => c.status !== 'pass')).toBe(true);
    expect(formatReport(report)).toMatch(/^FAIL\s+config/m);
  });
});

describe('doctor: extraction models', () => {
  it('passes when the bundled models load and extract a synthetic fingerprint, and is a warn without scanners', async () => {
    const { checkModels } = await import('../../src/setup/doctor/models.js');
    const ok = await checkModels(true);
    expect(ok.status).toBe('pass');
    expect(ok.detail).toMatch(/template, quality \d+/);
    expect((await checkModels(false)).status).toBe('warn');
  });
});
