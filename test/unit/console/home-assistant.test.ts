import { describe, expect, it } from 'vitest';
import { discoveryMessages, siteOptedIn } from '../../../src/console/home-assistant.js';

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
