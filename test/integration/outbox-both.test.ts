/**
 * `upstream: [api, mqtt]` with the real service and a real broker: a punch is done only when
 * both have it; a broker outage holds nothing back on the API and loses nothing on MQTT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { emptySecrets } from '../../src/config/secrets.js';
import { AttendanceClient } from '../../src/api/client.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { startTcpRelay, type TcpRelay } from '../helpers/fault-proxy.js';
import { startService, type InProcessService } from '../helpers/service.js';

let service: InProcessService;
let broker: TestBroker;
let relay: TcpRelay;
let dir: string;

async function until(cond: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  service = await startService();
  broker = await startBroker();
  // The agent reaches the broker through a relay, so the test decides when it may reconnect
  // (after the subscriber is back: a broker without persistence keeps nothing for it).
  relay = await startTcpRelay(broker.port);
  dir = mkdtempSync(join(tmpdir(), 'outbox-both-'));
});
afterAll(async () => {
  await relay?.close();
  await broker?.stop();
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('upstream api + mqtt', () => {
  it('done when both have it; the API goes on while the broker is away', async () => {
    const admin = new AttendanceClient({
      baseUrl: service.url,
      clientId: service.clientId,
      apiKey: service.apiKey,
      apiSecret: service.apiSecret,
    });
    for (const c of ['B1', 'B2', 'B3']) await admin.addOrUpdateUser({ employeeCode: c, firstName: 'Both', lastName: c });
    const config = parseConfig({
      dataDir: dir,
      terminal: { id: 'gate-both', site: 'plant-2', mode: 'toggle' },
      upstream: ['api', 'mqtt'],
      api: { url: service.url, clientId: service.clientId },
      mqtt: { url: relay.url },
      outbox: { backoffBaseMs: 20, backoffCapMs: 200 },
    });
    const secrets = { ...emptySecrets(), apiKey: service.apiKey, apiSecret: service.apiSecret };
    const received = new Map<string, { employeeCode: string; direction: string; site: string }>();
    const sub = mqtt.connect(broker.url, { clientId: 'both-sub', reconnectPeriod: 100 });
    sub.on('message', (topic, p) => {
      const m = JSON.parse(p.toString()) as { id: string; employeeCode: string; direction: string; site: string };
      expect(topic).toBe('attendance/plant-2/gate-both/events');
      received.set(m.id, m);
    });
    await new Promise<void>((r) => sub.once('connect', () => r()));
    await sub.subscribeAsync('attendance/plant-2/gate-both/events', { qos: 1 });
    const daemon = new Daemon({ config, secrets, idlePollMs: 20 });
    const ctx = await daemon.start();
    try {
      const a = await ctx.policy.punch({ employeeCode: 'B1', source: 'finger', at: '2026-05-04 08:00:00', tzOffset: 120 });
      await until(async () => (await ctx.outbox.status()).delivered === 1);
      expect(received.get((a as { id: string }).id)).toMatchObject({ employeeCode: 'B1', direction: 'in', site: 'plant-2' });

      relay.refuse(true);
      await broker.stop();
      const b = await ctx.policy.punch({ employeeCode: 'B2', source: 'iris', at: '2026-05-04 08:05:00', tzOffset: 120 });
      const c = await ctx.policy.punch({ employeeCode: 'B1', source: 'finger', at: '2026-05-04 16:00:00', tzOffset: 120 });
      expect(c).toMatchObject({ direction: 'out', inTime: '2026-05-04 08:00:00' });
      // The API has both while the broker is down; they are not done yet.
      await until(async () => (await ctx.outbox.status()).perSink.api!.pending === 0);
      const st = await ctx.outbox.status();
      expect(st).toMatchObject({ pending: 2, delivered: 1, perSink: { api: { pending: 0 }, mqtt: { pending: 2 } } });
      const onApi = await admin.getEvents({ from: '2026-05-04 00:00:00', to: '2026-05-05 00:00:00' });
      expect(onApi.returnValue?.map((e) => [e.returnValue?.employeeCode, e.returnValue?.inTime, e.returnValue?.outTime ?? null])).toEqual([
        ['B1', '2026-05-04 08:00:00', '2026-05-04 16:00:00'],
        ['B2', '2026-05-04 08:05:00', null],
      ]);

      await broker.restart();
      await until(() => sub.connected);
      await sub.subscribeAsync('attendance/plant-2/gate-both/events', { qos: 1 });
      relay.refuse(false);
      await until(async () => (await ctx.outbox.status()).delivered === 3);
      await until(() => received.has((b as { id: string }).id) && received.has((c as { id: string }).id));
    } finally {
      await daemon.stop();
      await Promise.race([sub.endAsync(true), new Promise((r) => setTimeout(r, 1000))]);
    }
  });
});
