/** The alerts feature: judged on change and on its tick, published per site when the set changes. */
import { describe, expect, it } from 'vitest';
import { Alerts, MAX_ALERTS_PER_SITE_DOC } from '../../../src/console/alerts.js';
import { feedTerminal, memoryBroker, testContext } from '../../helpers/console-parts.js';

const setUp = () => {
  const ctx = testContext({ settings: { alerts: { ...testContext().settings.alerts, lostMinutes: 0 } } });
  const broker = memoryBroker();
  const alerts = new Alerts(ctx, broker);
  const changed: Array<string | null> = [];
  ctx.events.on('alerts', (k) => changed.push(k));
  return { ctx, broker, alerts, changed };
};
const docs = (published: Array<{ topic: string; payload: string }>) =>
  published.map((p) => ({
    topic: p.topic,
    ...(JSON.parse(p.payload) as { count: number; alerts: Array<{ code: string; terminal: string }>; truncated?: number }),
  }));

describe('the alerts feature', () => {
  it('judges a terminal when it changes and says which row shows it', () => {
    const { ctx, changed } = setUp();
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'lost' });
    expect(ctx.book.forTerminal('plant-a', 'gate-1').map((a) => a.code)).toEqual(['TERMINAL_LOST']);
    expect(changed).toEqual(['plant-a/gate-1']);
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
    expect(ctx.book.all()).toEqual([]);
    expect(changed).toEqual(['plant-a/gate-1', 'plant-a/gate-1']);
  });

  it("publishes each site's alerts retained when they change, not again when they do not, and again after a reconnect", () => {
    const { ctx, broker, alerts } = setUp();
    ctx.health.mqttConnected = true;
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'lost' });
    feedTerminal(ctx, 'plant-b', 'gate-1', { state: 'online' });
    alerts.tick();
    expect(docs(broker.published).map((d) => [d.topic, d.count])).toEqual([
      ['attendance/plant-a/alerts', 1],
      ['attendance/plant-b/alerts', 0],
    ]);
    expect(ctx.health.alertPublishes).toBe(2);
    alerts.tick();
    expect(broker.published).toHaveLength(2);
    ctx.events.brokerChanged(true);
    alerts.tick();
    expect(broker.published).toHaveLength(4);
  });

  it('publishes nothing without the broker, and tries a failed site again on the next tick', async () => {
    const { ctx, broker, alerts } = setUp();
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'lost' });
    broker.connected = false;
    alerts.tick();
    expect(broker.published).toEqual([]);
    broker.connected = true;
    broker.failNext(1);
    alerts.tick();
    await new Promise((r) => setImmediate(r));
    expect(broker.published).toEqual([]);
    alerts.tick();
    expect(docs(broker.published).map((d) => d.count)).toEqual([1]);
  });

  it('forgets the alerts of a terminal that went, and caps a document at 500 alerts', () => {
    const { ctx, broker, alerts, changed } = setUp();
    for (let i = 0; i < MAX_ALERTS_PER_SITE_DOC + 2; i++) feedTerminal(ctx, 'big', `t${i}`, { state: 'lost' });
    alerts.tick();
    const [doc] = docs(broker.published);
    expect([doc!.count, doc!.alerts.length, doc!.truncated]).toEqual([502, 500, 2]);
    changed.length = 0;
    ctx.fleet.apply('attendance/big/t0/state', Buffer.alloc(0), false);
    expect(changed).toEqual([null]);
    expect(ctx.book.forTerminal('big', 't0')).toEqual([]);
  });

  it('judges the clock only while the broker is there (old figures would call every terminal silent)', () => {
    const { ctx, alerts } = setUp();
    const old = new Date(Date.now() - 3_600_000).toISOString();
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online', metrics: { at: old } });
    ctx.book.set('plant-a', 'gate-1', [], Date.now());
    alerts.tick();
    expect(ctx.book.all()).toEqual([]);
    ctx.health.mqttConnected = true;
    alerts.tick();
    expect(ctx.book.all().map((a) => a.code)).toEqual(['TERMINAL_SILENT']);
  });
});
