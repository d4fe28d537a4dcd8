/**
 * Every failure the uploader must ride out, against the real attendance service on loopback
 * through a fault-injecting proxy (and a real broker for MQTT): nothing lost, nothing doubled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import type { SqliteDatabase } from '../../src/core/sqlite.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { Outbox } from '../../src/store/outbox.js';
import { ApiSink } from '../../src/upload/api-sink.js';
import { MqttSink } from '../../src/upload/mqtt-sink.js';
import { Uploader } from '../../src/upload/uploader.js';
import { startBroker } from '../helpers/broker.js';
import { startFaultProxy, startTcpRelay, type FaultProxy } from '../helpers/fault-proxy.js';
import { startService, type InProcessService } from '../helpers/service.js';

const CODES = Array.from({ length: 20 }, (_, i) => `F${100 + i}`);
let service: InProcessService;
let admin: AttendanceClient;
let proxy: FaultProxy;
let dir: string;
let db: SqliteDatabase;
let outbox: Outbox;
let day = 1;

async function until(cond: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Records a check-in and a check-out for each code on a new day; returns the expected keys. */
async function recordDay(codes: string[]): Promise<string[]> {
  const d = `2026-04-${String(day++).padStart(2, '0')}`;
  const keys: string[] = [];
  for (const c of codes) {
    await outbox.record({
      employeeCode: c,
      direction: 'in',
      localTime: `${d} 08:00:00`,
      tzOffset: 60,
      source: 'finger',
      terminalId: 'gate-1',
    });
    await outbox.record({
      employeeCode: c,
      direction: 'out',
      localTime: `${d} 16:00:00`,
      inTime: `${d} 08:00:00`,
      tzOffset: 60,
      source: 'finger',
      terminalId: 'gate-1',
    });
    keys.push(`${c}|${d} 08:00:00|${d} 16:00:00`);
  }
  return keys;
}

async function serviceEvents(): Promise<string[]> {
  const env = await admin.getEvents({ from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' });
  return (env.returnValue ?? []).map((e) => `${e.returnValue!.employeeCode}|${e.returnValue!.inTime}|${e.returnValue!.outTime ?? ''}`);
}

function uploader(extra: { timeoutMs?: number } = {}) {
  const client = new AttendanceClient({
    baseUrl: proxy.url,
    clientId: service.clientId,
    apiKey: service.apiKey,
    apiSecret: service.apiSecret,
    timeoutMs: extra.timeoutMs ?? 3000,
  });
  const up = new Uploader({ outbox, sinks: [new ApiSink(client)], batchSize: 200, backoffBaseMs: 20, backoffCapMs: 200, idlePollMs: 20 });
  const errors: string[] = [];
  up.on('error', (e) => errors.push(e.error.code));
  return { up, errors, client };
}

beforeAll(async () => {
  service = await startService();
  admin = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret });
  for (const c of CODES) await admin.addOrUpdateUser({ employeeCode: c, firstName: 'Fault', lastName: c });
  proxy = await startFaultProxy(service.url);
});
afterAll(async () => {
  await proxy?.close();
  await service?.stop();
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-faults-'));
  db = await openAgentDatabase(dir);
  outbox = await Outbox.open(db);
  proxy.clear();
  proxy.up();
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('uploader against a failing service', () => {
  const cases: Array<[string, () => void, string, { timeoutMs?: number }?]> = [
    ['HTTP 5xx', () => proxy.inject({ kind: 'status', status: 503 }, 3, '/event'), 'API_HTTP_5XX'],
    ['a reset connection', () => proxy.inject({ kind: 'reset' }, 2, '/event'), 'API_NETWORK'],
    ['a garbage body', () => proxy.inject({ kind: 'garbage' }, 2, '/event'), 'API_BAD_RESPONSE'],
    ['a stall before the service saw the request', () => proxy.inject({ kind: 'stall' }, 1, '/event'), 'API_TIMEOUT', { timeoutMs: 400 }],
    [
      'a stall after the service stored the batch (the replay must not double)',
      () => proxy.inject({ kind: 'stall-after-forward' }, 2, '/event'),
      'API_TIMEOUT',
      { timeoutMs: 400 },
    ],
  ];
  for (const [name, inject, code, opts] of cases) {
    it(`rides out ${name}: every event once`, async () => {
      const before = await serviceEvents();
      const expected = await recordDay(CODES);
      inject();
      const { up, errors } = uploader(opts);
      await up.start();
      await until(async () => (await outbox.status()).pending === 0);
      await up.stop();
      expect(errors[0]).toBe(code);
      const now = (await serviceEvents()).filter((k) => !before.includes(k));
      expect(now.sort()).toEqual(expected.sort());
      expect(await outbox.status()).toMatchObject({ pending: 0, dead: 0, delivered: 2 * CODES.length });
    });
  }

  it('honours Retry-After of a 429', async () => {
    await recordDay(CODES.slice(0, 2));
    proxy.inject({ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, 1, '/event');
    const { up } = uploader();
    const delays: number[] = [];
    up.on('error', (e) => delays.push(e.retryInMs));
    const started = Date.now();
    await up.start();
    await until(async () => (await outbox.status()).pending === 0);
    await up.stop();
    expect(delays[0]).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('refreshes an expired token once and goes on without an error', async () => {
    await recordDay(CODES.slice(0, 3));
    const { up, errors, client } = uploader();
    await client.getToken();
    await service.service.revokeTokens();
    proxy.inject({ kind: 'unauthorized' }, 1, '/event');
    await up.start();
    await until(async () => (await outbox.status()).pending === 0);
    await up.stop();
    expect(errors).toEqual([]);
    expect(client.tokensObtained).toBeGreaterThanOrEqual(2);
  });

  it('an item that makes the service fail the whole request (HTTP 500) is isolated; the others go on', async () => {
    const poison = 'F119';
    const expected = await recordDay(CODES);
    proxy.failWhenBodyIncludes(`"${poison}"`);
    const { up } = uploader();
    await up.start();
    await until(async () => (await outbox.status()).delivered === 2 * (CODES.length - 1));
    const st = await outbox.status();
    expect(st.pending).toBe(2);
    const [stuck] = await outbox.list();
    expect(stuck).toMatchObject({ employeeCode: poison, direction: 'in' });
    expect(stuck!.deliveries[0]!.lastError).toMatch(/API_HTTP_5XX/);
    // The service is fixed: the poison goes too.
    proxy.failWhenBodyIncludes(null);
    await until(async () => (await outbox.status()).pending === 0);
    await up.stop();
    const got = await serviceEvents();
    for (const k of expected) expect(got.filter((g) => g === k)).toHaveLength(1);
  });

  it('a dead letter among good items: the others are delivered; retried once the user exists', async () => {
    const ghost = `GHOST${Date.now() % 100000}`;
    const expected = await recordDay([CODES[0]!, ghost, CODES[1]!]);
    const { up } = uploader();
    const dead: string[] = [];
    up.on('dead', (d) => dead.push(`${d.employeeCode}:${d.status}`));
    await up.start();
    await until(async () => (await outbox.status()).pending === 0);
    expect(dead).toEqual([`${ghost}:USER_NOT_AVAILABLE`, `${ghost}:USER_NOT_AVAILABLE`]);
    const st = await outbox.status();
    // The ghost's check-in is dead; its check-out waits neither (dead does not block) and dies too.
    expect(st.dead).toBe(2);
    expect(st.delivered).toBe(4);
    const letters = await outbox.list({ dead: true });
    expect(letters[0]!.deliveries[0]).toMatchObject({ lastStatus: 'USER_NOT_AVAILABLE' });
    await admin.addOrUpdateUser({ employeeCode: ghost, firstName: 'Now', lastName: 'Known' });
    expect(await outbox.retryDead()).toBe(2);
    up.wake();
    await until(async () => (await outbox.status()).delivered === 6);
    await up.stop();
    const got = await serviceEvents();
    for (const k of expected) expect(got.filter((g) => g === k)).toHaveLength(1);
  });
});

describe('uploader against a broker that goes away and comes back', () => {
  it('delivers what was recorded while the broker was down, each id received', async () => {
    const broker = await startBroker();
    // The sink reaches the broker through a relay, so the test decides when it may reconnect
    // (after the subscriber is back: a broker without persistence keeps nothing for it).
    const relay = await startTcpRelay(broker.port);
    const mqttOutbox = await Outbox.open(db, { sinks: ['mqtt'] });
    const sink = new MqttSink({
      url: relay.url,
      prefix: 'attendance',
      site: 's1',
      terminal: 'gate-9',
      reconnectBaseMs: 50,
      reconnectCapMs: 300,
      publishTimeoutMs: 2000,
    });
    const up = new Uploader({ outbox: mqttOutbox, sinks: [sink], backoffBaseMs: 20, backoffCapMs: 200, idlePollMs: 20 });
    const ids = new Set<string>();
    const sub = mqtt.connect(broker.url, { clientId: 'faults-sub', reconnectPeriod: 100 });
    sub.on('message', (_t, p) => ids.add((JSON.parse(p.toString()) as { id: string }).id));
    await new Promise<void>((r) => sub.once('connect', () => r()));
    await sub.subscribeAsync(sink.topic, { qos: 1 });
    try {
      await up.start();
      const first = await mqttOutbox.record({
        employeeCode: 'M1',
        direction: 'in',
        localTime: '2026-05-01 08:00:00',
        tzOffset: 0,
        source: 'iris',
        terminalId: 'gate-9',
      });
      await until(() => ids.has(first.id));
      relay.refuse(true);
      await broker.stop();
      const during: string[] = [];
      for (let i = 0; i < 5; i++)
        during.push(
          (
            await mqttOutbox.record({
              employeeCode: `M${i + 2}`,
              direction: 'in',
              localTime: '2026-05-01 08:01:00',
              tzOffset: 0,
              source: 'iris',
              terminalId: 'gate-9',
            })
          ).id,
        );
      await new Promise((r) => setTimeout(r, 300));
      expect((await mqttOutbox.status()).pending).toBe(5);
      await broker.restart();
      await until(() => sub.connected);
      await sub.subscribeAsync(sink.topic, { qos: 1 });
      relay.refuse(false);
      await until(async () => (await mqttOutbox.status()).pending === 0);
      await until(() => during.every((id) => ids.has(id)));
      expect((await mqttOutbox.status()).delivered).toBe(6);
    } finally {
      await up.stop();
      await Promise.race([sub.endAsync(true), new Promise((r) => setTimeout(r, 1000))]);
      await relay.close();
      await broker.stop();
    }
  });
});
