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
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { VERSION } from '../core/version.js';
import type { FleetRow } from '../ops/fleet-row.js';
import { terminalTopic } from '../ops/topics.js';
import type { BrokerLink, ConsoleContext, ConsoleFeature } from './console-context.js';

const log = logger('console');

/** Discovery documents published per pass at most (a large fleet is announced over several). */
export const HA_PUBLISHES_PER_TICK = 500;
export const HA_TICK_MS = 2000;

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

/** Publishes the discovery documents of the opted-in sites' terminals (see the top of this file). */
export class HomeAssistantDiscovery implements ConsoleFeature {
  readonly name = 'home-assistant';
  readonly #ctx: ConsoleContext;
  readonly #broker: BrokerLink;
  /** Published per terminal: key → the version it was published with. */
  readonly #published = new Map<string, string>();
  #timer: NodeJS.Timeout | null = null;

  constructor(ctx: ConsoleContext, broker: BrokerLink) {
    this.#ctx = ctx;
    this.#broker = broker;
    const ha = ctx.settings.homeAssistant;
    if (ha.sites.length === 0) return;
    // Home Assistant came (back) online: it wants every document again.
    broker.follow(`${ha.discoveryPrefix}/status`, (payload) => {
      if (payload.toString('utf8') === 'online') this.#published.clear();
    });
    ctx.events.on('broker', (up) => {
      if (up) this.#published.clear();
    });
  }

  /** Publishes what is not published yet, at most HA_PUBLISHES_PER_TICK documents. */
  publish(): void {
    const ha = this.#ctx.settings.homeAssistant;
    if (!this.#broker.connected || ha.sites.length === 0) return;
    let budget = HA_PUBLISHES_PER_TICK;
    for (const r of this.#ctx.fleet.records()) {
      if (budget <= 0) break;
      if (!siteOptedIn(ha.sites, r.site)) continue;
      const version = r.row.version ?? '';
      if (this.#published.get(r.key) === version) continue;
      this.#published.set(r.key, version);
      for (const m of discoveryMessages(this.#ctx.options.prefix, ha.discoveryPrefix, r.row)) {
        budget--;
        this.#broker.publish(m.topic, m.payload).catch((err: unknown) => {
          this.#published.delete(r.key);
          log.warn({ err: toAgentError(err).message, topic: m.topic }, 'could not publish a Home Assistant discovery document');
        });
      }
    }
  }

  start(): void {
    if (this.#ctx.settings.homeAssistant.sites.length) this.#timer = setInterval(() => this.publish(), HA_TICK_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
