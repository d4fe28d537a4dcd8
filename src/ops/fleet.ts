/**
 * The central view of a fleet, built from the retained state, info and metrics of every
 * terminal under a prefix (optionally one site).
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { TypedEmitter } from '../core/events.js';
import { AgentError } from '../core/errors.js';
import { parseTerminalTopic } from './topics.js';

export interface TerminalView {
  site: string;
  terminal: string;
  state: string | null;
  /** Newest of the state change, info or metrics timestamps seen. */
  lastSeen: string | null;
  queueDepth: number | null;
  oldestPendingAgeSec: number | null;
  dead: number | null;
  delivered: number | null;
  lastError: string | null;
  version: string | null;
  clock: string | null;
  /** Codes of the terminal's alerts (metrics `alerts`), e.g. CLOCK_EARLIER_BOOT_HELD. */
  alerts: string[];
}

export interface FleetEvents extends Record<string, unknown> {
  change: TerminalView;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

export class FleetMonitor extends TypedEmitter<FleetEvents> {
  readonly #terminals = new Map<string, TerminalView>();
  readonly #prefix: string;
  readonly #site: string | null;
  #client: MqttClient | null = null;

  constructor(options: { prefix: string; site?: string | null }) {
    super();
    this.#prefix = options.prefix;
    this.#site = options.site ?? null;
  }

  /** Applies one message; exported for tests of the view logic. */
  apply(topic: string, payload: Buffer): TerminalView | null {
    const t = parseTerminalTopic(this.#prefix, topic);
    if (!t || (this.#site && t.site !== this.#site)) return null;
    if (!['state', 'metrics', 'info'].includes(t.leaf)) return null;
    const key = `${t.site}/${t.terminal}`;
    const view: TerminalView = this.#terminals.get(key) ?? {
      site: t.site, terminal: t.terminal, state: null, lastSeen: null, queueDepth: null, oldestPendingAgeSec: null, dead: null, delivered: null, lastError: null, version: null, clock: null, alerts: [],
    };
    const text = payload.toString('utf8');
    if (t.leaf === 'state') {
      view.state = text === '' ? null : text;
    } else if (text !== '') {
      let doc: Record<string, unknown>;
      try {
        doc = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return null;
      }
      const at = str(doc.at);
      if (at && (!view.lastSeen || at > view.lastSeen)) view.lastSeen = at;
      if (t.leaf === 'metrics') {
        const q = (doc.queue ?? {}) as Record<string, unknown>;
        view.queueDepth = num(q.pending ?? doc.queueDepth);
        view.oldestPendingAgeSec = num(q.oldestPendingAgeSec ?? doc.oldestPendingAgeSec);
        view.dead = num(q.dead ?? doc.dead);
        view.delivered = num(q.delivered ?? doc.delivered);
        view.lastError = str(doc.lastError) ?? (doc.lastError === null ? null : view.lastError);
        if (Array.isArray(doc.alerts)) view.alerts = doc.alerts.map((a) => str((a as { code?: unknown } | null)?.code)).filter((c): c is string => c !== null);
        const clock = doc.clock as Record<string, unknown> | null | undefined;
        if (clock && typeof clock.clockTrusted === 'boolean') view.clock = clock.clockTrusted ? 'synchronized' : 'unsynchronized';
      } else {
        view.version = str(doc.version);
        const clock = doc.clock as Record<string, unknown> | undefined;
        view.clock = clock ? (clock.synchronized ? 'synchronized' : 'unsynchronized') : view.clock;
      }
    }
    this.#terminals.set(key, view);
    this.emit('change', view);
    return view;
  }

  get terminals(): TerminalView[] {
    return [...this.#terminals.values()].sort((a, b) => `${a.site}/${a.terminal}`.localeCompare(`${b.site}/${b.terminal}`));
  }

  /**
   * Connects and subscribes; resolves once the retained messages have arrived (no new retained
   * message for `settleMs` after the subscription was granted, at most 10 × settleMs).
   */
  async start(url: string, options: IClientOptions = {}, settleMs = 300): Promise<void> {
    let client: MqttClient;
    try {
      client = await mqtt.connectAsync(url, { reconnectPeriod: 2000, connectTimeout: 5000, ...options, clean: true });
    } catch (err) {
      throw new AgentError('OPS_MQTT_CONNECT', `cannot connect to the broker at ${url}: ${(err as Error).message}`, { url }, { hint: 'check the broker URL, credentials and that the broker runs', retryable: true, cause: err });
    }
    this.#client = client;
    let last = Date.now();
    client.on('message', (topic, payload, packet) => {
      if (packet.retain) last = Date.now();
      this.apply(topic, payload);
    });
    const site = this.#site ?? '+';
    await client.subscribeAsync([`${this.#prefix}/${site}/+/state`, `${this.#prefix}/${site}/+/metrics`, `${this.#prefix}/${site}/+/info`], { qos: 1 });
    last = Date.now();
    const deadline = Date.now() + Math.max(settleMs * 10, 3000);
    while (Date.now() - last < settleMs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }

  async stop(): Promise<void> {
    await this.#client?.endAsync().catch(() => undefined);
    this.#client = null;
  }
}

function age(iso: string | null, now: number): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}

/** A plain table for a terminal screen. */
export function formatFleetTable(views: TerminalView[], now = Date.now()): string {
  const head = ['SITE', 'TERMINAL', 'STATE', 'LAST SEEN', 'QUEUE', 'OLDEST', 'DEAD', 'LAST ERROR', 'ALERTS'];
  const rows = views.map((v) => [
    v.site, v.terminal, v.state ?? '?', age(v.lastSeen, now), v.queueDepth === null ? '-' : String(v.queueDepth),
    v.oldestPendingAgeSec === null ? '-' : `${v.oldestPendingAgeSec}s`, v.dead === null ? '-' : String(v.dead), v.lastError ?? '', v.alerts.join(','),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n') + (views.length === 0 ? '\n(no terminals have reported under this prefix)' : '');
}
