/** The console's feed against a real in-process broker (aedes): the fleet from retained topics, the broker lent to the others. */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { MqttFeed } from '../../../src/console/mqtt-feed.js';
import { startAckingBroker } from '../../helpers/broker.js';
import { testContext } from '../../helpers/console-parts.js';
import { until } from '../../helpers/poll.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('the MQTT feed', () => {
  it('takes the retained state, info and metrics into the fleet, counts what it took and refused, and lends the broker', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const terminal = await mqtt.connectAsync(broker.url, { clientId: 'terminal' });
    cleanup.push(() => terminal.endAsync(true));
    await terminal.publishAsync('attendance/plant-a/gate-1/state', 'online', { qos: 1, retain: true });
    await terminal.publishAsync('attendance/plant-a/gate-1/info', JSON.stringify({ version: '1.2.3' }), { qos: 1, retain: true });
    await terminal.publishAsync('attendance/plant-a/gate-1/metrics', 'not json', { qos: 1, retain: true });

    const ctx = testContext({ url: broker.url });
    const feed = new MqttFeed(ctx);
    const followed: string[] = [];
    feed.follow('homeassistant/status', (p) => followed.push(p.toString()));
    const broke: boolean[] = [];
    ctx.events.on('broker', (up) => broke.push(up));
    expect(feed.connected).toBe(false);
    await expect(feed.publish('x', 'y')).rejects.toMatchObject({ code: 'MQTT_UNAVAILABLE' });
    feed.start();
    cleanup.push(() => feed.stop());
    await until('the terminal in the fleet', () => ctx.fleet.get('plant-a/gate-1')?.row.version === '1.2.3');
    await until('the refused metrics counted', () => ctx.health.dropped === 1);
    expect(ctx.health.mqttConnected).toBe(true);
    expect(feed.connected).toBe(true);
    expect(broke).toEqual([true]);
    expect(ctx.fleet.get('plant-a/gate-1')!.row.state).toBe('online');
    expect(ctx.health.messages).toBe(3);

    await terminal.publishAsync('homeassistant/status', 'online', { qos: 1 });
    await until('the followed topic handed over', () => followed.length === 1);
    expect(followed).toEqual(['online']);
    expect(ctx.fleet.size).toBe(1);

    const reader = await mqtt.connectAsync(broker.url, { clientId: 'reader' });
    cleanup.push(() => reader.endAsync(true));
    await feed.publish('attendance/plant-a/alerts', '{"count":0}');
    const got = new Promise<{ payload: string; retain: boolean }>((resolve) =>
      reader.on('message', (_t, p, packet) => resolve({ payload: p.toString(), retain: packet.retain })),
    );
    await reader.subscribeAsync('attendance/plant-a/alerts', { qos: 1 });
    expect(await got).toEqual({ payload: '{"count":0}', retain: true });

    await feed.stop();
    expect(feed.connected).toBe(false);
    expect(broke).toEqual([true, false]);
    expect(ctx.health.mqttConnected).toBe(false);
  });
});
