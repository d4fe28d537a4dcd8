/**
 * The central view of a fleet, built from the retained state, info and metrics of every
 * terminal under a prefix (optionally one site), and what `fleet --watch` prints of it.
 *
 * The first view waits until the broker has delivered every retained message: after the
 * subscription is granted the monitor publishes a unique, non-retained marker to a topic of its
 * own (subscribed in the same request). A broker queues the retained messages of a subscription
 * before it handles a later publish of the same client (Mosquitto); one that streams them
 * (aedes) may let the marker overtake them, so after the marker the monitor also waits until no
 * retained message came for `afterMarkerMs`. A broker that drops the marker (an ACL) ends the wait
 * after `quietMs` without retained messages. A broker may also drop retained messages a client does
 * not read fast enough (Mosquitto, QoS 0 included: a slow or loaded reader of 10,000 terminals got
 * half of 30,000): every terminal publishes state, info and metrics retained, so after the marker
 * the monitor asks again for the leaves it lacks, topic by topic in chunks a broker delivers whole. `maxWaitMs` caps it: the first view then says that
 * it gave up and how many terminals and retained messages had arrived.
 *
 * `--watch` (FleetWatch) prints only what changed: a line (or a JSON line) per terminal whose
 * view changed, never the whole fleet per message. Changes are coalesced per terminal and written
 * only while stdout takes them (backpressure): with a slow reader the memory held is one pending
 * entry per terminal, whatever the message rate.
 */
import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { TypedEmitter } from '../core/events.js';
import { AgentError } from '../core/errors.js';
import { parseTerminalTopic } from './topics.js';
import { stateOfInfo, stateOfMetrics, terminalState, type Reason, type StateInputs } from './terminal-state.js';

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
  /** Why it is degraded, one short sentence each (the messages of `reasons`). */
  degraded: string[];
  /** Why it is degraded: a code (SCANNER_NOT_READY, CLOCK_UNTRUSTED, ...) and a sentence each. */
  reasons: Reason[];
  /** Since when it is in `status` (ISO): the terminal's own word, else an estimate. */
  since: string | null;
  /** Each scanner with its status (`ready`, `connecting`, `disconnected`, ...). */
  scanners: Array<{ key: string; status: string }> | null;
  /**
   * What a person should read (src/ops/terminal-state.ts): online, degraded, offline or lost; the
   * same in the console, its /metrics and Home Assistant.
   */
  status: string | null;
  version: string | null;
  /** synchronized (confirmed by a time service), assumed (nothing can tell) or unsynchronized. */
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

export interface FirstViewOptions {
  /** After the marker, wait until no retained message came for this long (default 300 ms). */
  afterMarkerMs?: number;
  /** Without the marker, the wait ends after this long without a retained message (default 2 s). */
  quietMs?: number;
  /** Give up after this long (default 30 s). */
  maxWaitMs?: number;
}

/** How the first view came to be. */
export interface FirstView {
  /** True when the broker has delivered every retained message (marker or quiet); false when the wait gave up. */
  complete: boolean;
  /** 'marker': the monitor's own marker came back and the retained messages stopped; 'quiet': no marker, no retained message for quietMs; 'gave-up': maxWaitMs passed. */
  rule: 'marker' | 'quiet' | 'gave-up';
  terminals: number;
  /** Retained messages delivered. */
  retained: number;
  /**
   * Retained messages the broker dropped from the first delivery and delivered when asked for
   * again, topic by topic (Mosquitto drops what a client does not read fast enough, QoS 0 too).
   */
  repaired: number;
  waitedMs: number;
}

const LEAF_BITS = { state: 1, info: 2, metrics: 4 } as const;
/** Topics asked for again per subscription when a broker dropped retained messages of the first view. */
const REPAIR_CHUNK = 500;

/** What a watch line reports; `status` is the state a person reads (`degraded` in place of `online`). */
const VIEW_FIELDS = ['status', 'queueDepth', 'dead', 'lastError', 'version', 'clock'] as const satisfies ReadonlyArray<keyof TerminalView>;

export class FleetMonitor extends TypedEmitter<FleetEvents> {
  readonly #terminals = new Map<string, TerminalView>();
  /** The retained leaves seen per terminal (LEAF_BITS), to ask again for the ones a broker dropped. */
  readonly #leaves = new Map<string, number>();
  /** The latest info and metrics per terminal, as the state model reads them. */
  readonly #docs = new Map<string, Pick<StateInputs, 'info' | 'metrics'>>();
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
    this.#leaves.set(key, (this.#leaves.get(key) ?? 0) | LEAF_BITS[t.leaf as keyof typeof LEAF_BITS]);
    const view: TerminalView = this.#terminals.get(key) ?? {
      site: t.site,
      terminal: t.terminal,
      state: null,
      lastSeen: null,
      queueDepth: null,
      oldestPendingAgeSec: null,
      dead: null,
      delivered: null,
      lastError: null,
      lastErrorAt: null,
      health: null,
      degraded: [],
      reasons: [],
      since: null,
      scanners: null,
      status: null,
      version: null,
      clock: null,
      alerts: [],
    };
    const docs = this.#docs.get(key) ?? { info: null, metrics: null };
    this.#docs.set(key, docs);
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
      if (typeof doc !== 'object' || doc === null) return null;
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
        if (Array.isArray(doc.scanners)) {
          view.scanners = doc.scanners.flatMap((x) => {
            const o = x as { key?: unknown; status?: unknown } | null;
            return typeof o?.key === 'string' && typeof o.status === 'string' ? [{ key: o.key, status: o.status }] : [];
          });
        }
        if (Array.isArray(doc.alerts))
          view.alerts = doc.alerts.map((a) => str((a as { code?: unknown } | null)?.code)).filter((c): c is string => c !== null);
        docs.metrics = stateOfMetrics(doc);
      } else {
        view.version = str(doc.version);
        docs.info = stateOfInfo(doc);
      }
    }
    const model = terminalState({ word: view.state, metrics: docs.metrics, info: docs.info, lastSeen: view.lastSeen });
    view.status = model.state;
    view.reasons = model.reasons;
    view.degraded = model.reasons.map((r) => r.message);
    view.since = model.since === null ? null : new Date(model.since).toISOString();
    view.clock = model.clock;
    this.#terminals.set(key, view);
    this.emit('change', view);
    return view;
  }

  get terminals(): TerminalView[] {
    return [...this.#terminals.values()].sort((a, b) => `${a.site}/${a.terminal}`.localeCompare(`${b.site}/${b.terminal}`));
  }

  /** One terminal's view (`site/terminal`), as it is now. */
  get(key: string): TerminalView | undefined {
    return this.#terminals.get(key);
  }

  get size(): number {
    return this.#terminals.size;
  }

  /**
   * Connects and subscribes; resolves with the first view's completeness once the broker has
   * delivered every retained message (see the file comment), or gave up after `maxWaitMs`.
   */
  async start(url: string, options: IClientOptions = {}, wait: FirstViewOptions = {}): Promise<FirstView> {
    let client: MqttClient;
    try {
      client = await mqtt.connectAsync(url, { reconnectPeriod: 2000, connectTimeout: 5000, ...options, clean: true });
    } catch (err) {
      throw new AgentError(
        'OPS_MQTT_CONNECT',
        `cannot connect to the broker at ${url}: ${(err as Error).message}`,
        { url },
        { hint: 'check the broker URL, credentials and that the broker runs', retryable: true, cause: err },
      );
    }
    this.#client = client;
    const nonce = randomBytes(8).toString('hex');
    const markerTopic = `${this.#prefix}/_fleet-monitor/${nonce}/marker`;
    let retained = 0;
    let lastRetained = Date.now();
    let markerAt: number | null = null;
    client.on('message', (topic, payload, packet) => {
      if (topic === markerTopic) {
        markerAt ??= Date.now();
        return;
      }
      // Only retained messages count for the wait (a live terminal may publish every 200 ms).
      // Mosquitto sends part of a large retained set to a slow reader without the retain flag
      // (10,000 terminals under load: half of them); those still come before the marker.
      if (packet.retain) {
        retained++;
        lastRetained = Date.now();
      }
      this.apply(topic, payload);
    });
    const site = this.#site ?? '+';
    // QoS 0: a broker holds back at most so many QoS 1 messages per client (Mosquitto:
    // max_queued_messages 1000) and drops the rest, retained ones included: at QoS 1 a fleet of
    // 10,000 arrived half. A view needs the current state, not every message: QoS 0 gets all of it.
    await client.subscribeAsync(
      [`${this.#prefix}/${site}/+/state`, `${this.#prefix}/${site}/+/metrics`, `${this.#prefix}/${site}/+/info`, markerTopic],
      { qos: 0 },
    );
    const granted = Date.now();
    lastRetained = granted;
    client.publish(markerTopic, nonce, { qos: 1, retain: false }, () => undefined);
    const afterMarker = wait.afterMarkerMs ?? 300;
    const quiet = wait.quietMs ?? 2000;
    const maxWait = wait.maxWaitMs ?? 30_000;
    const view = (rule: FirstView['rule'], repaired: number): FirstView => ({
      complete: rule !== 'gave-up',
      rule,
      terminals: this.#terminals.size,
      retained,
      repaired,
      waitedMs: Date.now() - granted,
    });
    let rule: FirstView['rule'] | null = null;
    while (!rule) {
      const now = Date.now();
      const idle = now - lastRetained;
      rule =
        markerAt !== null && idle >= afterMarker
          ? 'marker'
          : markerAt === null && idle >= quiet
            ? 'quiet'
            : now - granted >= maxWait
              ? 'gave-up'
              : null;
      if (!rule) await new Promise((r) => setTimeout(r, 20));
    }
    if (rule !== 'marker') return view(rule, 0);
    // Every terminal publishes state, info and metrics retained: a leaf missing here was dropped by
    // the broker (or never published). Ask for those topics again, a chunk at a time, each chunk
    // small enough to be delivered whole, and done when its own marker is back.
    const missing: string[] = [];
    for (const [key, bits] of this.#leaves) {
      for (const [leaf, bit] of Object.entries(LEAF_BITS)) if (!(bits & bit)) missing.push(`${this.#prefix}/${key}/${leaf}`);
    }
    const before = retained;
    for (let i = 0; i < missing.length; i += REPAIR_CHUNK) {
      if (Date.now() - granted >= maxWait) return view('gave-up', retained - before);
      const topics = missing.slice(i, i + REPAIR_CHUNK);
      markerAt = null;
      await client.subscribeAsync(topics, { qos: 0 });
      lastRetained = Date.now();
      client.publish(markerTopic, nonce, { qos: 1, retain: false }, () => undefined);
      while (!(markerAt !== null && Date.now() - lastRetained >= Math.min(afterMarker, 100)) && Date.now() - granted < maxWait)
        await new Promise((r) => setTimeout(r, 10));
      // The fleet's own subscriptions cover these topics: no need to keep two.
      await client.unsubscribeAsync(topics);
    }
    return view('marker', retained - before);
  }

  async stop(): Promise<void> {
    await this.#client?.endAsync(true).catch(() => undefined);
    this.#client = null;
  }
}

/** One line of `fleet --watch --json`: a terminal whose view changed, and which fields did. */
export interface FleetChange {
  terminal: TerminalView;
  changed: string[];
}

/** The fields of `now` that differ from `before` (all set ones for a new terminal). lastSeen, oldest age and delivered count change with every metrics message: they are shown, not watched. */
export function changedFields(before: TerminalView | undefined, now: TerminalView): string[] {
  return VIEW_FIELDS.filter((f) => (before ? before[f] !== now[f] : now[f] !== null));
}

function show(v: unknown): string {
  return v === null || v === undefined ? '-' : typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : String(v);
}

const LABELS: Record<(typeof VIEW_FIELDS)[number], string> = {
  status: 'state',
  queueDepth: 'queue',
  dead: 'dead',
  lastError: 'error',
  version: 'version',
  clock: 'clock',
};

/** A text line of `fleet --watch`: time, terminal, each changed field as before→now. */
export function formatChangeLine(before: TerminalView | undefined, now: TerminalView, changed: string[], at = new Date()): string {
  const parts = changed.map((f) => {
    const k = f as (typeof VIEW_FIELDS)[number];
    return before ? `${LABELS[k]} ${show(before[k])}→${show(now[k])}` : `${LABELS[k]} ${show(now[k])}`;
  });
  return `${at.toISOString()}  ${now.site}/${now.terminal}  ${before ? '' : 'new: '}${parts.join('  ')}`;
}

/**
 * What `fleet --watch` prints after the first view: each terminal change once, coalesced, written
 * only while `out` takes it. Holds at most one pending entry per terminal and one line beyond
 * `out`'s buffer, whatever the message rate and however slowly `out` is read.
 */
export class FleetWatch {
  readonly #monitor: FleetMonitor;
  readonly #out: Writable;
  readonly #json: boolean;
  /** The view of each terminal as last printed (or as the first view showed it). */
  readonly #printed = new Map<string, TerminalView>();
  /** Terminals changed since they were last printed, oldest change first. */
  readonly #dirty = new Set<string>();
  #blocked = false;
  #stopped = false;
  readonly #onChange = (v: TerminalView) => this.#changed(v);
  readonly #onDrain = () => {
    this.#blocked = false;
    this.#pump();
  };
  /** Lines written so far. */
  lines = 0;

  constructor(monitor: FleetMonitor, out: Writable, options: { json: boolean }) {
    this.#monitor = monitor;
    this.#out = out;
    this.#json = options.json;
    for (const v of monitor.terminals) this.#printed.set(`${v.site}/${v.terminal}`, { ...v });
    monitor.on('change', this.#onChange);
  }

  /** Terminals waiting to be printed (at most the fleet's size). */
  get pending(): number {
    return this.#dirty.size;
  }

  #changed(v: TerminalView): void {
    const key = `${v.site}/${v.terminal}`;
    if (!this.#dirty.has(key) && changedFields(this.#printed.get(key), v).length === 0) return;
    this.#dirty.add(key);
    this.#pump();
  }

  #pump(): void {
    while (!this.#blocked && !this.#stopped && this.#dirty.size > 0) {
      const key = this.#dirty.values().next().value as string;
      this.#dirty.delete(key);
      const now = this.#monitor.get(key);
      if (!now) continue;
      const before = this.#printed.get(key);
      const changed = changedFields(before, now);
      if (changed.length === 0) continue;
      const line = this.#json ? JSON.stringify({ terminal: now, changed } satisfies FleetChange) : formatChangeLine(before, now, changed);
      this.#printed.set(key, { ...now });
      this.lines++;
      if (!this.#out.write(`${line}\n`)) {
        this.#blocked = true;
        this.#out.once('drain', this.#onDrain);
      }
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#monitor.off('change', this.#onChange);
    this.#out.off('drain', this.#onDrain);
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
    v.site,
    v.terminal,
    v.status ?? v.state ?? '?',
    age(v.lastSeen, now),
    scannerSummary(v.scanners),
    v.queueDepth === null ? '-' : String(v.queueDepth),
    v.oldestPendingAgeSec === null ? '-' : `${v.oldestPendingAgeSec}s`,
    v.dead === null ? '-' : String(v.dead),
    v.lastError ? `${v.lastError}${v.lastErrorAt ? ` (since ${age(v.lastErrorAt, now)})` : ''}` : '',
    v.alerts.join(','),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
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
    if (v.status === 'lost')
      problems.push({
        site: v.site,
        terminal: v.terminal,
        status: 'lost',
        why: `gone without a clean stop (last seen ${v.lastSeen ?? 'never'})`,
      });
    else if (v.status === 'degraded')
      problems.push({ site: v.site, terminal: v.terminal, status: 'degraded', why: v.degraded.join('; ') || 'degraded' });
  }
  if (views.length === 0)
    return { ok: false, problems, summary: 'CRITICAL: no terminal has reported under this prefix (check --mqtt, --prefix and --site)' };
  if (problems.length === 0) return { ok: true, problems, summary: `OK: ${views.length} terminal(s), none lost or degraded` };
  const list = problems.map((p) => `${p.site}/${p.terminal} ${p.status}: ${p.why}`).join('; ');
  return { ok: false, problems, summary: `CRITICAL: ${problems.length} of ${views.length} terminal(s) lost or degraded: ${list}` };
}
