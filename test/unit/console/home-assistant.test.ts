import { describe, expect, it } from 'vitest';
import { discoveryMessages, HA_PUBLISHES_PER_TICK, HomeAssistantDiscovery, siteOptedIn } from '../../../src/console/home-assistant.js';
import { feedTerminal, memoryBroker, testContext } from '../../helpers/console-parts.js';

describe('Home Assistant discovery', () => {
  it('makes each terminal a device with sensors for state, queue, dead letters, last punch and temperature', () => {
    const msgs = discoveryMessages('attendance', 'homeassistant', { site: 'plant-a', terminal: 'gate.7', version: '1.2.3' });
    expect(msgs.map((m) => m.topic)).toEqual(
      ['state', 'queue', 'dead_letters', 'last_punch', 'cpu_temperature'].map(
        (s) => `homeassistant/sensor/edge_agent_plant-a_gate_7_${s}/config`,
      ),
    );
    const docs = msgs.map((m) => JSON.parse(m.payload) as Record<string, unknown>);
    for (const d of docs) {
      expect(d.device).toMatchObject({ identifiers: ['edge_agent_plant-a_gate_7'], sw_version: '1.2.3', manufacturer: 'edge-agent' });
      expect(d.unique_id).toMatch(/^edge_agent_plant-a_gate_7_/);
    }
    expect(docs[0]).toMatchObject({ state_topic: 'attendance/plant-a/gate.7/state' });
    expect(docs[0]).not.toHaveProperty('availability');
    for (const d of docs.slice(1)) {
      expect(d.state_topic).toBe('attendance/plant-a/gate.7/metrics');
      expect(d.availability).toEqual([
        { topic: 'attendance/plant-a/gate.7/state', value_template: expect.stringContaining("'online', 'degraded'") },
      ]);
    }
    expect(docs[1]!.value_template).toContain('value_json.queue.pending');
    expect(docs[3]).toMatchObject({ device_class: 'timestamp' });
    expect(docs[4]).toMatchObject({ device_class: 'temperature', unit_of_measurement: '°C' });
  });

  it('is opt-in per site', () => {
    expect(siteOptedIn([], 'plant-a')).toBe(false);
    expect(siteOptedIn(['plant-b'], 'plant-a')).toBe(false);
    expect(siteOptedIn(['plant-a'], 'plant-a')).toBe(true);
    expect(siteOptedIn(['*'], 'anything')).toBe(true);
  });
});

describe('the Home Assistant discovery feature', () => {
  const setUp = (sites: string[]) => {
    const ctx = testContext({ settings: { homeAssistant: { sites, discoveryPrefix: 'homeassistant' } } });
    const broker = memoryBroker();
    return { ctx, broker, discovery: new HomeAssistantDiscovery(ctx, broker) };
  };
  const terminalsOf = (published: Array<{ topic: string }>) => [
    ...new Set(published.map((p) => /edge_agent_(.+)_(state|queue|dead_letters|last_punch|cpu_temperature)\/config$/.exec(p.topic)![1])),
  ];

  it("publishes the opted-in sites' terminals once per version, and all again when Home Assistant comes online", () => {
    const { ctx, broker, discovery } = setUp(['plant-a']);
    expect([...broker.followed.keys()]).toEqual(['homeassistant/status']);
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online', info: { version: '1.0.0' } });
    feedTerminal(ctx, 'plant-b', 'gate-1', { state: 'online', info: { version: '1.0.0' } });
    discovery.publish();
    expect(terminalsOf(broker.published)).toEqual(['plant-a_gate-1']);
    expect(broker.published).toHaveLength(5);
    discovery.publish();
    expect(broker.published).toHaveLength(5);
    feedTerminal(ctx, 'plant-a', 'gate-1', { info: { version: '1.1.0' } });
    discovery.publish();
    expect(broker.published).toHaveLength(10);
    broker.followed.get('homeassistant/status')!(Buffer.from('offline'));
    discovery.publish();
    expect(broker.published).toHaveLength(10);
    broker.followed.get('homeassistant/status')!(Buffer.from('online'));
    discovery.publish();
    expect(broker.published).toHaveLength(15);
    ctx.events.brokerChanged(true);
    discovery.publish();
    expect(broker.published).toHaveLength(20);
  });

  it('spreads a large fleet over several passes, and publishes nothing without the broker or opted-in sites', () => {
    const { ctx, broker, discovery } = setUp(['*']);
    for (let i = 0; i < 150; i++) feedTerminal(ctx, 'big', `t${i}`, { state: 'online' });
    broker.connected = false;
    discovery.publish();
    expect(broker.published).toEqual([]);
    broker.connected = true;
    discovery.publish();
    expect(broker.published).toHaveLength(HA_PUBLISHES_PER_TICK);
    discovery.publish();
    expect(broker.published).toHaveLength(750);
    const none = setUp([]);
    feedTerminal(none.ctx, 'plant-a', 'gate-1', { state: 'online' });
    none.discovery.publish();
    expect(none.broker.published).toEqual([]);
    expect(none.broker.followed.size).toBe(0);
  });

  it('tries a terminal again when a document was not taken', async () => {
    const { ctx, broker, discovery } = setUp(['plant-a']);
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
    broker.failNext(1);
    discovery.publish();
    await new Promise((r) => setImmediate(r));
    expect(broker.published).toHaveLength(4);
    discovery.publish();
    expect(broker.published).toHaveLength(9);
  });
});
