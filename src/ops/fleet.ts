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
  /** When the last error began (it is cleared once its cause is resolved). */
  lastErrorAt: string | null;
  /** Metrics `health`: `degraded` when a scanner is not ready, delivery fails or an alert waits. */
  health: 'ok' | 'degraded' | null;
  /** Why it is degraded, one short sentence each. */
  degraded: string[];
  /** Each scanner with its status (`ready`, `connecting`, `disconnected`, ...). */
  scanners: Array<{ key: string; status: string }> | null;
  /**
   * What a person should read: the retained `state` (online, offline, lost) with `degraded` in
   * place of `online` when the terminal says it is degraded.
   */
  status: string | null;
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
      site: t.site, terminal: t.terminal, state: null, lastSeen: null, queueDepth: null, oldestPendingAgeSec: null, dead: null, delivered: null, lastError: null, lastErrorAt: null, health: null, degraded: [], scanners: null, status: null, version: null, clock: null, alerts: [],
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
        view.lastErrorAt = view.lastError === null ? null : (str(doc.lastErrorAt) ?? view.lastErrorAt);
        if (doc.health === 'ok' || doc.health === 'degraded') view.health = doc.health;
        if (Array.isArray(doc.degraded)) view.degraded = doc.degraded.filter((r): r is string => typeof r === 'string');
        if (Array.isArray(doc.scanners)) {
          view.scanners = doc.scanners.flatMap((x) => {
            const o = x as { key?: unknown; status?: unknown } | null;
            return typeof o?.key === 'string' && typeof o.status === 'string' ? [{ key: o.key, status: o.status }] : [];
          });
        }
        if (Array.isArray(doc.alerts)) view.alerts = doc.alerts.map((a) => str((a as { code?: unknown } | null)?.code)).filter((c): c is string => c !== null);
        const clock = doc.clock as Record<string, unknown> | null | undefined;
        if (clock && typeof clock.clockTrusted === 'boolean') view.clock = clock.clockTrusted ? 'synchronized' : 'unsynchronized';
      } else {
        view.version = str(doc.version);
        const clock = doc.clock as Record<string, unknown> | undefined;
        view.clock = clock ? (clock.synchronized ? 'synchronized' : 'unsynchronized') : view.clock;
      }
    }
    view.status = view.state === 'online' && view.health === 'degraded' ? 'degraded' : view.state;
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

/** The scanners column: `2/2 ready`, or the ones that are not (`r30x:/dev/fp0 disconnected`). */
export function scannerSummary(scanners: TerminalView['scanners']): string {
  if (scanners === null) return '-';
  if (scanners.length === 0) return 'none';
  const bad = scanners.filter((x) => x.status !== 'ready');
  return bad.length === 0 ? `${scanners.length}/${scanners.length} ready` : bad.map((x) => `${x.key} ${x.status}`).join(', ');
}

/** A plain table for a terminal screen. */
export function formatFleetTable(views: TerminalView[], now = Date.now()): string {
  const head = ['SITE', 'TERMINAL', 'STATE', 'LAST SEEN', 'SCANNERS', 'QUEUE', 'OLDEST', 'DEAD', 'LAST ERROR', 'ALERTS'];
  const rows = views.map((v) => [
    v.site, v.terminal, v.status ?? v.state ?? '?', age(v.lastSeen, now), scannerSummary(v.scanners), v.queueDepth === null ? '-' : String(v.queueDepth),
    v.oldestPendingAgeSec === null ? '-' : `${v.oldestPendingAgeSec}s`, v.dead === null ? '-' : String(v.dead), v.lastError ? `${v.lastError}${v.lastErrorAt ? ` (since ${age(v.lastErrorAt, now)})` : ''}` : '', v.alerts.join(','),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n') + (views.length === 0 ? '\n(no terminals have reported under this prefix)' : '');
}

export interface FleetCheck {
  ok: boolean;
  /** Terminals lost (gone without a clean stop) or degraded, with why. */
  problems: Array<{ site: string; terminal: string; status: string; why: string }>;
  /** One line for cron mail and Nagios-style checks. */
  summary: string;
}

/**
 * `fleet --check`: fails when a terminal is lost or degraded, or when no terminal has reported
 * (a wrong prefix or site must not read as healthy). A cleanly stopped (offline) terminal is fine.
 */
export function checkFleet(views: TerminalView[]): FleetCheck {
  const problems: FleetCheck['problems'] = [];
  for (const v of views) {
    if (v.status === 'lost') problems.push({ site: v.site, terminal: v.terminal, status: 'lost', why: `gone without a clean stop (last seen ${v.lastSeen ?? 'never'})` });
    else if (v.status === 'degraded') problems.push({ site: v.site, terminal: v.terminal, status: 'degraded', why: v.degraded.join('; ') || 'degraded' });
  }
  if (views.length === 0) return { ok: false, problems, summary: 'CRITICAL: no terminal has reported under this prefix (check --mqtt, --prefix and --site)' };
  if (problems.length === 0) return { ok: true, problems, summary: `OK: ${views.length} terminal(s), none lost or degraded` };
  const list = problems.map((p) => `${p.site}/${p.terminal} ${p.status}: ${p.why}`).join('; ');
  return { ok: false, problems, summary: `CRITICAL: ${problems.length} of ${views.length} terminal(s) lost or degraded: ${list}` };
}
