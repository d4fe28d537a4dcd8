/**
 * The sink contract (test/unit/upload/sink.contract.ts) against the real downstreams: the API
 * sink through a fault proxy to the real attendance service on loopback, the MQTT sink to a real
 * broker (Mosquitto where installed) with a subscriber reading what arrives.
 */
import mqtt from 'mqtt';
import { AttendanceClient } from '../../src/api/client.js';
import { ApiSink } from '../../src/upload/api-sink.js';
import { MqttSink } from '../../src/upload/mqtt-sink.js';
import { startBroker } from '../helpers/broker.js';
import { startFaultProxy, startTcpRelay } from '../helpers/fault-proxy.js';
import { startService } from '../helpers/service.js';
import { sinkContract } from '../unit/upload/sink.contract.js';

sinkContract('api', async () => {
  const service = await startService();
  const proxy = await startFaultProxy(service.url);
  const opts = { baseUrl: proxy.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret, timeoutMs: 3000 };
  const client = new AttendanceClient(opts);
  const admin = new AttendanceClient({ ...opts, baseUrl: service.url });
  return {
    sink: new ApiSink(client),
    async known(codes) {
      for (const c of codes) await admin.addOrUpdateUser({ employeeCode: c, firstName: 'Test', lastName: c });
    },
    async received() {
      const env = await admin.getEvents({ from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' });
      return (env.returnValue ?? []).map(
        (e) => `${e.returnValue!.employeeCode}|${e.returnValue!.inTime ?? ''}|${e.returnValue!.outTime ?? ''}`,
      );
    },
    outage: async () => proxy.down(),
    restore: async () => proxy.up(),
    stall: async () => {
      proxy.inject({ kind: 'stall' }, 1, '/event');
      return async () => proxy.clear();
    },
    async teardown() {
      await proxy.close();
      await service.stop();
    },
  };
});

sinkContract('mqtt', async () => {
  const broker = await startBroker();
  const relay = await startTcpRelay(broker.port);
  const sink = new MqttSink({
    url: relay.url,
    prefix: 'attendance',
    site: 'site-1',
    terminal: 'gate-1',
    reconnectBaseMs: 50,
    reconnectCapMs: 300,
    publishTimeoutMs: 3000,
  });
  await sink.start();
  const byId = new Map<string, { employeeCode: string; direction: string; time: string; inTime: string | null }>();
  const sub = mqtt.connect(broker.url, { clientId: 'contract-subscriber', reconnectPeriod: 100 });
  sub.on('message', (_t, payload) => {
    const m = JSON.parse(payload.toString()) as {
      id: string;
      employeeCode: string;
      direction: string;
      time: string;
      inTime: string | null;
    };
    byId.set(m.id, m); // a consumer dedupes by id
  });
  await new Promise<void>((r) => sub.once('connect', () => r()));
  await sub.subscribeAsync(sink.topic, { qos: 1 });
  const settle = async () => {
    let last = -1;
    while (last !== byId.size) {
      last = byId.size;
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  return {
    sink,
    known: async () => undefined,
    async received() {
      await settle();
      const events = new Map<string, string>();
      for (const m of byId.values()) {
        if (m.direction === 'in') events.set(`${m.employeeCode}|${m.time}`, events.get(`${m.employeeCode}|${m.time}`) ?? '');
        else events.set(`${m.employeeCode}|${m.inTime ?? ''}`, m.time);
      }
      return [...events].map(([k, out]) => `${k}|${out}`);
    },
    stall: async () => {
      relay.hold(true);
      return async () => relay.hold(false);
    },
    outage: () => broker.stop(),
    async restore() {
      await broker.restart();
      if (!sub.connected) await new Promise<void>((r) => sub.once('connect', () => r()));
      await sub.subscribeAsync(sink.topic, { qos: 1 });
    },
    async teardown() {
      await sink.close();
      await Promise.race([sub.endAsync(true), new Promise((r) => setTimeout(r, 1000))]);
      await relay.close();
      await broker.stop();
    },
  };
});
