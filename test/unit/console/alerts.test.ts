/** The alerts feature: judged on change and on its tick, published per site when the set changes. */
import { describe, expect, it } from 'vitest';
import { Alerts, MAX_ALERTS_PER_SITE_DOC } from '../../../src/console/alerts.js';
import { feedTerminal, memoryBroker, testContext } from '../../helpers/console-parts.js';
import { randomBytes } from 'node:crypto';
import { keyringOf } from '../../../src/ops/ops-auth.js';
import { checkTelemetry, TelemetrySigner } from '../../../src/ops/telemetry-auth.js';

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

  it("publishes a site again when an alert's message changes under the same code (a terminal degraded for another reason)", () => {
    const { ctx, broker, alerts } = setUp();
    ctx.health.mqttConnected = true;
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
    const degraded = (message: string) =>
      ctx.book.set(
        'plant-a',
        'gate-1',
        [{ code: 'TERMINAL_DEGRADED', severity: 'warning', site: 'plant-a', terminal: 'gate-1', message, hint: 'h' }],
        Date.now(),
      );
    degraded('degraded: scanner r30x:/dev/ttyS0 disconnected');
    alerts.publish(Date.now());
    degraded('degraded: outbox full (1 pending and dead): new punches are refused');
    alerts.publish(Date.now());
    alerts.publish(Date.now());
    const messages = docs(broker.published).map((d) => (d.alerts[0] as { message?: string } | undefined)?.message);
    expect(messages).toEqual([
      'degraded: scanner r30x:/dev/ttyS0 disconnected',
      'degraded: outbox full (1 pending and dead): new punches are refused',
    ]);
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

  it('signs the site document, answers a forged one with its own, and raises nothing for unsigned terminals', () => {
    const key = randomBytes(32);
    const keyring = keyringOf({ opsKey: key, opsKeys: {} });
    const ctx = testContext({ telemetryKeys: keyring, settings: { alerts: { ...testContext().settings.alerts, lostMinutes: 0 } } });
    const broker = memoryBroker();
    const alerts = new Alerts(ctx, broker);
    ctx.health.mqttConnected = true;
    const terminal = new TelemetrySigner({ site: 'plant-a', terminal: 'gate-1', key });
    terminal.beginConnection(1);
    const lost = JSON.stringify(terminal.signWill('state', { state: 'lost' }));
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: lost });
    feedTerminal(ctx, 'plant-a', 'fake-1', { state: 'lost' });
    alerts.tick();
    expect(broker.published).toHaveLength(1);
    const doc = JSON.parse(broker.published[0]!.payload) as Record<string, unknown>;
    expect(doc).toMatchObject({ count: 1, alerts: [{ terminal: 'gate-1', code: 'TERMINAL_LOST' }] });
    expect(checkTelemetry(keyring, { site: 'plant-a', terminal: '', leaf: 'alerts' }, doc)).toMatchObject({ verified: true });
    // Someone publishes `count: 0` retained on the site's topic: the console's own document goes back at once.
    const follow = broker.followed.get('attendance/+/alerts')!;
    follow(Buffer.from(JSON.stringify({ site: 'plant-a', count: 0, alerts: [] })), 'attendance/plant-a/alerts');
    expect(broker.published).toHaveLength(2);
    expect(broker.published[1]).toEqual(broker.published[0]);
    // Its own document coming back changes nothing.
    follow(Buffer.from(broker.published[0]!.payload), 'attendance/plant-a/alerts');
    expect(broker.published).toHaveLength(2);
  });
});
