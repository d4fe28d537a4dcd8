/**
 * Home Assistant MQTT discovery (opt-in per site, `console.homeAssistant.sites`): each terminal
 * becomes a device with sensors for its state, queue, dead letters, last punch time and CPU
 * temperature, read straight from the terminal's own retained topics. The console publishes the
 * discovery documents retained on `<discoveryPrefix>/sensor/<id>/config` when it first sees a
 * terminal (again when its version changes, and when Home Assistant says it came online on
 * `<discoveryPrefix>/status`).
 *
 * Availability is the terminal's state topic: online and degraded are available, offline and
 * lost are not. The state sensor itself has no availability, so a lost terminal shows `lost`
 * instead of `unavailable`.
 */
import type { FleetRow } from '../ops/fleet-row.js';
import { terminalTopic } from '../ops/topics.js';
import { VERSION } from '../core/version.js';

export interface DiscoveryMessage {
  topic: string;
  payload: string;
}

/** Home Assistant ids allow letters, digits, _ and -. */
function idPart(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function siteOptedIn(sites: readonly string[], site: string): boolean {
  return sites.includes('*') || sites.includes(site);
}

export function discoveryMessages(
  prefix: string,
  discoveryPrefix: string,
  row: Pick<FleetRow, 'site' | 'terminal' | 'version'>,
): DiscoveryMessage[] {
  const base = { prefix, site: row.site, terminal: row.terminal };
  const stateTopic = terminalTopic(base, 'state');
  const metricsTopic = terminalTopic(base, 'metrics');
  const deviceId = `edge_agent_${idPart(row.site)}_${idPart(row.terminal)}`;
  const device = {
    identifiers: [deviceId],
    name: `${row.terminal} (${row.site})`,
    manufacturer: 'edge-agent',
    model: 'attendance terminal',
    ...(row.version ? { sw_version: row.version } : {}),
    suggested_area: row.site,
  };
  const availability = {
    availability: [{ topic: stateTopic, value_template: "{{ 'online' if value in ['online', 'degraded'] else 'offline' }}" }],
  };
  const sensors: Array<{ id: string; doc: Record<string, unknown> }> = [
    { id: 'state', doc: { name: 'State', state_topic: stateTopic, icon: 'mdi:lan-connect' } },
    {
      id: 'queue',
      doc: {
        name: 'Queue',
        state_topic: metricsTopic,
        value_template: '{{ value_json.queue.pending if value_json.queue else None }}',
        unit_of_measurement: 'punches',
        state_class: 'measurement',
        icon: 'mdi:tray-full',
        ...availability,
      },
    },
    {
      id: 'dead_letters',
      doc: {
        name: 'Dead letters',
        state_topic: metricsTopic,
        value_template: '{{ value_json.queue.dead if value_json.queue else None }}',
        state_class: 'measurement',
        icon: 'mdi:email-alert',
        ...availability,
      },
    },
    {
      id: 'last_punch',
      doc: {
        name: 'Last punch',
        state_topic: metricsTopic,
        value_template: '{{ value_json.capture.lastPunchAt if value_json.capture and value_json.capture.lastPunchAt else None }}',
        device_class: 'timestamp',
        ...availability,
      },
    },
    {
      id: 'cpu_temperature',
      doc: {
        name: 'CPU temperature',
        state_topic: metricsTopic,
        value_template: '{{ value_json.system.cpuTempC if value_json.system and value_json.system.cpuTempC is not none else None }}',
        device_class: 'temperature',
        unit_of_measurement: '°C',
        state_class: 'measurement',
        entity_category: 'diagnostic',
        ...availability,
      },
    },
  ];
  return sensors.map((s) => {
    const id = `${deviceId}_${s.id}`;
    return {
      topic: `${discoveryPrefix}/sensor/${id}/config`,
      payload: JSON.stringify({
        ...s.doc,
        unique_id: id,
        object_id: id,
        device,
        origin: { name: 'edge-agent console', sw_version: VERSION },
      }),
    };
  });
}
