/**
 * `/metrics` in the Prometheus text exposition format (version 0.0.4, written by prom-client):
 * one series per terminal and metric, labelled `site` and `terminal`, and the console's own health. A figure a terminal
 * has not reported is left out (no series) rather than given as 0. Times are Unix seconds,
 * durations seconds, sizes bytes, as Prometheus names want them.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { FleetRow } from '../ops/fleet-row.js';
import { isLive as live } from '../ops/terminal-state.js';
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
  /** Several series per terminal (one per reason): their extra labels and values, in place of `value`. */
  samples?: (t: PromTerminal) => Array<[Record<string, string>, number]>;
}

const seconds = (iso: string | null) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t / 1000 : null;
};
const ms = (v: number | null) => (v === null ? null : v / 1000);

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
    name: 'edge_agent_terminal_degraded_reason',
    type: 'gauge',
    help: 'Why the terminal is degraded, one series per reason code (SCANNER_NOT_READY, CLOCK_UNTRUSTED, OUTBOX_FULL, UPSTREAM_FAILING, ...); always 1.',
    value: () => null,
    labelNames: ['reason'],
    samples: (t) => [...new Set(t.row.reasons.map((r) => r.code))].map((reason) => [{ reason }, 1]),
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
    help: 'Whether the terminal trusts its clock (synchronized, or assumed where no time service can tell): 1 or 0.',
    value: (t) => (t.row.clockSynchronized === null ? null : t.row.clockSynchronized ? 1 : 0),
  },
  {
    name: 'edge_agent_clock_state',
    type: 'gauge',
    help: "The terminal's clock as a label: synchronized (a time service confirmed it), assumed (nothing can tell) or unsynchronized; always 1.",
    value: (t) => (t.row.clock === null ? null : 1),
    labelNames: ['clock'],
    labels: (t) => ({ clock: t.row.clock ?? '' }),
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

/** What the console's own families are read from at a scrape. */
interface OwnFigures {
  health: ConsoleHealth;
  terminals: number;
  alerts: ActiveAlert[];
  cpuSeconds: number;
  rssBytes: number;
}

interface OwnFamily {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  labelNames?: string[];
  /** One value (no labels), or the labelled samples. */
  value: (f: OwnFigures) => number | Array<[Record<string, string>, number]>;
}

/** The console's own families, in output order. */
const OWN_FAMILIES: OwnFamily[] = [
  { name: 'edge_agent_console_up', type: 'gauge', help: 'The console runs: always 1 (absent when it does not).', value: () => 1 },
  {
    name: 'edge_agent_console_start_time_seconds',
    type: 'gauge',
    help: 'When the console started (Unix time).',
    value: (f) => f.health.startedAt / 1000,
  },
  {
    name: 'edge_agent_console_mqtt_connected',
    type: 'gauge',
    help: 'Whether the console is connected to the broker: 1 or 0.',
    value: (f) => (f.health.mqttConnected ? 1 : 0),
  },
  { name: 'edge_agent_console_terminals', type: 'gauge', help: 'Terminals the console knows.', value: (f) => f.terminals },
  {
    name: 'edge_agent_console_mqtt_messages_total',
    type: 'counter',
    help: 'MQTT messages the console received.',
    value: (f) => f.health.messages,
  },
  {
    name: 'edge_agent_console_mqtt_messages_dropped_total',
    type: 'counter',
    help: 'MQTT messages the console refused (too big, not JSON, a bad topic).',
    value: (f) => f.health.dropped,
  },
  {
    name: 'edge_agent_console_alerts',
    type: 'gauge',
    help: 'Active alerts by severity.',
    labelNames: ['severity'],
    value: (f) => (['critical', 'warning'] as const).map((s) => [{ severity: s }, f.alerts.filter((a) => a.severity === s).length]),
  },
  {
    name: 'edge_agent_console_alert_publishes_total',
    type: 'counter',
    help: 'Retained alert documents published on <prefix>/<site>/alerts.',
    value: (f) => f.health.alertPublishes,
  },
  {
    name: 'edge_agent_console_page_clients',
    type: 'gauge',
    help: 'Pages connected for live updates (Server-Sent Events).',
    value: (f) => f.health.sseClients,
  },
  { name: 'edge_agent_console_http_requests_total', type: 'counter', help: 'HTTP requests served.', value: (f) => f.health.httpRequests },
  {
    name: 'edge_agent_console_commands_total',
    type: 'counter',
    help: 'Signed commands sent from the page.',
    value: (f) => f.health.commandsSent,
  },
  {
    name: 'edge_agent_console_cpu_seconds_total',
    type: 'counter',
    help: 'CPU time of the console process (user + system), in seconds.',
    value: (f) => f.cpuSeconds,
  },
  {
    name: 'edge_agent_console_resident_memory_bytes',
    type: 'gauge',
    help: 'Resident memory of the console process, in bytes.',
    value: (f) => f.rssBytes,
  },
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
  readonly #own: Array<{ family: OwnFamily; metric: Metric }>;

  constructor() {
    const registers = [this.registry];
    const make = (name: string, type: 'gauge' | 'counter', help: string, labelNames: string[]): Metric =>
      type === 'counter' ? new Counter({ name, help, labelNames, registers }) : new Gauge({ name, help, labelNames, registers });
    this.#terminal = TERMINAL_FAMILIES.map((family) => ({
      family,
      metric: make(family.name, family.type, family.help, ['site', 'terminal', ...(family.labelNames ?? [])]),
    }));
    this.#own = OWN_FAMILIES.map((family) => ({ family, metric: make(family.name, family.type, family.help, family.labelNames ?? []) }));
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
        const own = { site: t.row.site, terminal: t.row.terminal };
        if (family.samples) {
          for (const [labels, v] of family.samples(t)) put(metric, { ...own, ...labels }, v);
          continue;
        }
        const v = family.value(t, now);
        if (v === null || !Number.isFinite(v)) continue;
        put(metric, { ...own, ...(family.labels?.(t) ?? {}) }, v);
      }
    }
    const cpu = process.cpuUsage();
    const figures: OwnFigures = {
      health,
      terminals: terminals.length,
      alerts,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      rssBytes: process.memoryUsage().rss,
    };
    for (const { family, metric } of this.#own) {
      const v = family.value(figures);
      for (const [labels, value] of typeof v === 'number' ? [[{}, v] as [Record<string, string>, number]] : v) put(metric, labels, value);
    }
    return this.registry.metrics();
  }
}
