/**
 * `/metrics` in the Prometheus text exposition format (version 0.0.4, written by prom-client):
 * one series per terminal and metric, labelled `site` and `terminal`, and the console's own health. A figure a terminal
 * has not reported is left out (no series) rather than given as 0. Times are Unix seconds,
 * durations seconds, sizes bytes, as Prometheus names want them.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { FleetRow } from '../ops/fleet-row.js';
import type { ActiveAlert } from './alert-rules.js';

export interface PromTerminal {
  row: FleetRow;
  /** When it entered its state (ms), null when unknown. */
  stateSince: number | null;
  alerts: number;
}

export interface ConsoleHealth {
  startedAt: number;
  mqttConnected: boolean;
  messages: number;
  dropped: number;
  sseClients: number;
  alertPublishes: number;
  httpRequests: number;
  commandsSent: number;
}

interface Family {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  value: (t: PromTerminal, now: number) => number | null;
  /** Extra labels of the series (the state, the version), named in `labelNames`. */
  labelNames?: string[];
  labels?: (t: PromTerminal) => Record<string, string>;
}

const seconds = (iso: string | null) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t / 1000 : null;
};
const ms = (v: number | null) => (v === null ? null : v / 1000);
const live = (s: string | null) => s === 'online' || s === 'degraded';

/** The per-terminal metric families, in output order. */
export const TERMINAL_FAMILIES: Family[] = [
  {
    name: 'edge_agent_terminal_up',
    type: 'gauge',
    help: 'Whether the terminal is connected (state online or degraded): 1 or 0.',
    value: (t) => (t.row.state === null ? null : live(t.row.state) ? 1 : 0),
  },
  {
    name: 'edge_agent_terminal_state',
    type: 'gauge',
    help: "The terminal's state as a label (online, degraded, offline, lost); always 1.",
    value: (t) => (t.row.state === null ? null : 1),
    labelNames: ['state'],
    labels: (t) => ({ state: t.row.state ?? '' }),
  },
  {
    name: 'edge_agent_terminal_state_seconds',
    type: 'gauge',
    help: 'How long the terminal has been in its state, in seconds (estimated when the console started later).',
    value: (t, now) => (t.stateSince === null ? null : Math.max(0, (now - t.stateSince) / 1000)),
  },
  {
    name: 'edge_agent_terminal_last_seen_timestamp_seconds',
    type: 'gauge',
    help: 'When the terminal last published its info or metrics (Unix time).',
    value: (t) => seconds(t.row.lastSeen),
  },
  {
    name: 'edge_agent_terminal_info',
    type: 'gauge',
    help: 'The agent version the terminal runs, as a label; always 1.',
    value: (t) => (t.row.version === null ? null : 1),
    labelNames: ['version'],
    labels: (t) => ({ version: t.row.version ?? '' }),
  },
  {
    name: 'edge_agent_queue_pending',
    type: 'gauge',
    help: 'Punches in the outbox waiting for delivery.',
    value: (t) => t.row.queuePending,
  },
  {
    name: 'edge_agent_queue_oldest_pending_seconds',
    type: 'gauge',
    help: 'Age of the oldest pending punch when the terminal last reported, in seconds (0 when nothing is pending).',
    value: (t) => t.row.oldestPendingAgeSec ?? (t.row.queuePending === 0 ? 0 : null),
  },
  { name: 'edge_agent_queue_dead', type: 'gauge', help: 'Dead letters: punches an upstream refused for good.', value: (t) => t.row.dead },
  {
    name: 'edge_agent_queue_delivered',
    type: 'gauge',
    help: 'Delivered punches still kept in the outbox (retention).',
    value: (t) => t.row.delivered,
  },
  {
    name: 'edge_agent_last_delivery_timestamp_seconds',
    type: 'gauge',
    help: 'When a punch was last delivered (Unix time).',
    value: (t) => seconds(t.row.lastDelivery),
  },
  {
    name: 'edge_agent_last_punch_timestamp_seconds',
    type: 'gauge',
    help: 'When a scanner of the terminal last recorded a punch (Unix time).',
    value: (t) => seconds(t.row.lastPunchAt),
  },
  {
    name: 'edge_agent_punches_total',
    type: 'counter',
    help: "Punches recorded by the terminal's scanners since the agent started.",
    value: (t) => t.row.punched,
  },
  {
    name: 'edge_agent_scanners',
    type: 'gauge',
    help: 'Scanners configured on the terminal.',
    value: (t) => (t.row.scannersReady === null ? null : t.row.scanners.length),
  },
  { name: 'edge_agent_scanners_ready', type: 'gauge', help: 'Scanners that are ready.', value: (t) => t.row.scannersReady },
  {
    name: 'edge_agent_identification_p95_seconds',
    type: 'gauge',
    help: '95th percentile of 1:N identification time, in seconds.',
    value: (t) => ms(t.row.identificationP95Ms),
  },
  {
    name: 'edge_agent_capture_to_punch_p95_seconds',
    type: 'gauge',
    help: '95th percentile from capture to durable punch (slower path), in seconds.',
    value: (t) => ms(t.row.captureP95Ms),
  },
  {
    name: 'edge_agent_clock_synchronized',
    type: 'gauge',
    help: 'Whether the terminal trusts its clock: 1 or 0.',
    value: (t) => (t.row.clockSynchronized === null ? null : t.row.clockSynchronized ? 1 : 0),
  },
  {
    name: 'edge_agent_cpu_temperature_celsius',
    type: 'gauge',
    help: 'CPU temperature where the terminal can read it.',
    value: (t) => t.row.cpuTempC,
  },
  {
    name: 'edge_agent_free_disk_bytes',
    type: 'gauge',
    help: "Free disk in the terminal's data folder, in bytes.",
    value: (t) => (t.row.freeDiskMb === null ? null : t.row.freeDiskMb * 1048576),
  },
  {
    name: 'edge_agent_resident_memory_bytes',
    type: 'gauge',
    help: 'Resident memory of the agent process, in bytes.',
    value: (t) => (t.row.rssMb === null ? null : Math.round(t.row.rssMb * 1048576)),
  },
  { name: 'edge_agent_alerts', type: 'gauge', help: 'Console alerts active for the terminal.', value: (t) => t.alerts },
];

/** A value as the old writer showed it: integers as they are, others to six decimals. */
const rounded = (v: number) => (Number.isInteger(v) ? v : Math.round(v * 1e6) / 1e6);

type OwnFamily = [name: string, type: 'gauge' | 'counter', help: string, labelNames: string[]];

/** The console's own families, in output order. */
const OWN_FAMILIES: OwnFamily[] = [
  ['edge_agent_console_up', 'gauge', 'The console runs: always 1 (absent when it does not).', []],
  ['edge_agent_console_start_time_seconds', 'gauge', 'When the console started (Unix time).', []],
  ['edge_agent_console_mqtt_connected', 'gauge', 'Whether the console is connected to the broker: 1 or 0.', []],
  ['edge_agent_console_terminals', 'gauge', 'Terminals the console knows.', []],
  ['edge_agent_console_mqtt_messages_total', 'counter', 'MQTT messages the console received.', []],
  ['edge_agent_console_mqtt_messages_dropped_total', 'counter', 'MQTT messages the console refused (too big, not JSON, a bad topic).', []],
  ['edge_agent_console_alerts', 'gauge', 'Active alerts by severity.', ['severity']],
  ['edge_agent_console_alert_publishes_total', 'counter', 'Retained alert documents published on <prefix>/<site>/alerts.', []],
  ['edge_agent_console_page_clients', 'gauge', 'Pages connected for live updates (Server-Sent Events).', []],
  ['edge_agent_console_http_requests_total', 'counter', 'HTTP requests served.', []],
  ['edge_agent_console_commands_total', 'counter', 'Signed commands sent from the page.', []],
  ['edge_agent_console_cpu_seconds_total', 'counter', 'CPU time of the console process (user + system), in seconds.', []],
  ['edge_agent_console_resident_memory_bytes', 'gauge', 'Resident memory of the console process, in bytes.', []],
];

type Metric = Gauge<string> | Counter<string>;

/** Sets one series: a counter is reset to its value (what the terminal or the console counted). */
function put(metric: Metric, labels: Record<string, string>, value: number): void {
  if (metric instanceof Counter) {
    if (value >= 0) metric.inc(labels, rounded(value));
  } else metric.set(labels, rounded(value));
}

/**
 * `/metrics` through prom-client: one registry per console, its families registered once in
 * output order; each scrape resets them and sets every series from the figures of that moment.
 * prom-client writes the text and escapes label values and help.
 */
export class ConsoleMetrics {
  readonly registry = new Registry();
  readonly #terminal: Array<{ family: Family; metric: Metric }>;
  readonly #own = new Map<string, Metric>();

  constructor() {
    const registers = [this.registry];
    const make = (name: string, type: 'gauge' | 'counter', help: string, labelNames: string[]): Metric =>
      type === 'counter' ? new Counter({ name, help, labelNames, registers }) : new Gauge({ name, help, labelNames, registers });
    this.#terminal = TERMINAL_FAMILIES.map((family) => ({
      family,
      metric: make(family.name, family.type, family.help, ['site', 'terminal', ...(family.labelNames ?? [])]),
    }));
    for (const [name, type, help, labelNames] of OWN_FAMILIES) this.#own.set(name, make(name, type, help, labelNames));
  }

  /** `Content-Type` of the exposition (text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The whole exposition: the terminals' families, then the console's health. */
  render(terminals: PromTerminal[], health: ConsoleHealth, alerts: ActiveAlert[], now = Date.now()): Promise<string> {
    this.registry.resetMetrics();
    for (const { family, metric } of this.#terminal) {
      for (const t of terminals) {
        const v = family.value(t, now);
        if (v === null || !Number.isFinite(v)) continue;
        put(metric, { site: t.row.site, terminal: t.row.terminal, ...(family.labels?.(t) ?? {}) }, v);
      }
    }
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const own = (name: string, value: number, labels: Record<string, string> = {}) => put(this.#own.get(name)!, labels, value);
    own('edge_agent_console_up', 1);
    own('edge_agent_console_start_time_seconds', health.startedAt / 1000);
    own('edge_agent_console_mqtt_connected', health.mqttConnected ? 1 : 0);
    own('edge_agent_console_terminals', terminals.length);
    own('edge_agent_console_mqtt_messages_total', health.messages);
    own('edge_agent_console_mqtt_messages_dropped_total', health.dropped);
    for (const severity of ['critical', 'warning'] as const)
      own('edge_agent_console_alerts', alerts.filter((a) => a.severity === severity).length, { severity });
    own('edge_agent_console_alert_publishes_total', health.alertPublishes);
    own('edge_agent_console_page_clients', health.sseClients);
    own('edge_agent_console_http_requests_total', health.httpRequests);
    own('edge_agent_console_commands_total', health.commandsSent);
    own('edge_agent_console_cpu_seconds_total', (cpu.user + cpu.system) / 1e6);
    own('edge_agent_console_resident_memory_bytes', mem.rss);
    return this.registry.metrics();
  }
}
