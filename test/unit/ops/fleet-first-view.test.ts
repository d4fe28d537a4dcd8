/**
 * The first view of `fleet` is complete even when the broker drops retained messages on their way
 * to the monitor (Mosquitto does with a reader that does not keep up): a real broker (aedes in
 * this process) that drops the first delivery of every other retained info and metrics message,
 * as a loaded broker would, and delivers them when asked again.
 *
 * Tests: src/ops/fleet.ts (FleetMonitor's first view; fleet.test.ts has the rest of fleet.ts).
 */
import { createServer, type Server } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetMonitor } from '../../../src/ops/fleet.js';
import { freePort } from '../../helpers/broker.js';

let server: Server | null = null;
let broker: Aedes | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await new Promise<void>((r) => (broker ? broker.close(() => r()) : r()));
  server = null;
  broker = null;
});

async function lossyBroker(): Promise<{ url: string; dropped: () => number }> {
  const seen = new Set<string>();
  let dropped = 0;
  let n = 0;
  broker = await Aedes.createBroker();
  // Drops a retained info or metrics message the first time it is forwarded, one in two.
  broker.authorizeForward = (_client, packet) => {
    if (packet.retain && /\/(info|metrics)$/.test(packet.topic) && !seen.has(packet.topic)) {
      seen.add(packet.topic);
      if (n++ % 2 === 0) {
        dropped++;
        return null;
      }
    }
    return packet;
  };
  const port = await freePort();
  server = createServer(broker.handle);
  await new Promise<void>((r) => server!.listen(port, '127.0.0.1', () => r()));
  return { url: `mqtt://127.0.0.1:${port}`, dropped: () => dropped };
}

describe('FleetMonitor first view', () => {
  it('asks again, topic by topic, for the retained messages the broker dropped: every terminal whole', async () => {
    const { url, dropped } = await lossyBroker();
    const pub = await mqtt.connectAsync(url);
    for (let i = 0; i < 40; i++) {
      const base = `att/s${i % 4}/t${i}`;
      await pub.publishAsync(`${base}/state`, 'online', { qos: 1, retain: true });
      await pub.publishAsync(`${base}/info`, JSON.stringify({ at: '2026-03-01T08:00:00Z', version: `1.${i}` }), { qos: 1, retain: true });
      await pub.publishAsync(`${base}/metrics`, JSON.stringify({ at: '2026-03-01T08:00:00Z', queue: { pending: i, dead: 0 } }), {
        qos: 1,
        retain: true,
      });
    }
    await pub.endAsync();
    const monitor = new FleetMonitor({ prefix: 'att' });
    try {
      const first = await monitor.start(url, {}, { maxWaitMs: 20_000 });
      expect(dropped()).toBe(40);
      expect(first).toMatchObject({ complete: true, rule: 'marker', terminals: 40, retained: 120, repaired: 40 });
      for (const [i, t] of monitor.terminals.sort((a, b) => Number(a.terminal.slice(1)) - Number(b.terminal.slice(1))).entries()) {
        expect(t).toMatchObject({ terminal: `t${i}`, state: 'online', version: `1.${i}`, queueDepth: i });
      }
    } finally {
      await monitor.stop();
    }
  }, 30_000);

  it('a leaf a terminal never published is asked for once, then the view is complete without it', async () => {
    const { url } = await lossyBroker();
    const pub = await mqtt.connectAsync(url);
    await pub.publishAsync('att/s1/old/state', 'online', { qos: 1, retain: true }); // an agent that published only its state
    await pub.endAsync();
    const monitor = new FleetMonitor({ prefix: 'att' });
    try {
      expect(await monitor.start(url, {}, { maxWaitMs: 20_000 })).toMatchObject({ complete: true, terminals: 1, retained: 1, repaired: 0 });
    } finally {
      await monitor.stop();
    }
  }, 30_000);
});
