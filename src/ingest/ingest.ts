/**
 * The central MQTT ingest: takes the punches the terminals publish to `<prefix>/+/+/events` off
 * the broker into the attendance API, without losing or doubling any.
 *
 * - **Shared subscription.** Every ingest process subscribes as `$share/<group>/<prefix>/+/+/events`
 *   (MQTT 5, or 3.1.1 where the broker accepts `$share` there, as Mosquitto does), so N processes
 *   split the messages between them. `--no-share` subscribes plainly, for a broker without shared
 *   subscriptions and one ingest.
 * - **Acknowledged after the API accepted.** A message's PUBACK is sent only when the attendance
 *   API has accepted its event (or, refused for good, it has been published to the dead-letter
 *   topic). mqtt.js's own manual acknowledgement (`handleMessage`, and `customHandleAcks` in MQTT 5)
 *   acknowledges when its callback is called and takes the next message only then: one message at
 *   a time per connection, one write per acknowledgement. So the callback is called at once, the
 *   PUBACK it would send is held back (see `holdAcknowledgements`), and the PUBACKs of a batch are
 *   sent together when the API has answered. The broker's in-flight window bounds what is held:
 *   `inflight` per connection (MQTT 5 receive maximum; with 3.1.1 the broker's setting, Mosquitto's
 *   max_inflight_messages, 20 by default). A process may keep several connections (`connections`,
 *   each a member of the group with its own persistent session) to hold more.
 * - **Persistent sessions.** Client ids are `<clientId>-<n>`, sessions persist (`clean: false`, MQTT 5
 *   session expiry). A message taken but not acknowledged when a process dies stays in its session:
 *   the broker sends it again when the same client id comes back (systemd restarts the service), and
 *   the API's event identity makes the replay harmless.
 * - **Repeats dropped by id.** An event id accepted lately (the last `dedupeSize`) or in flight is
 *   acknowledged without a request. Across processes the API's identity (employee + inTime) dedupes.
 * - **Per-item outcomes** as the agent's outbox has them (upload/api-sink.ts): SUCCESS accepted;
 *   USER_NOT_AVAILABLE, INVALID_PARAMETERS, or a payload that is not a punch: dead letter (JSON with
 *   status, description and the original message, QoS 1) then acknowledged; ERROR or a failed request:
 *   retried with backoff, not acknowledged meanwhile. A check-out without inTime refused as "matching
 *   event cannot be found" is tried `outOnlyRetries` more times first: with N consumers its check-in
 *   may simply be behind it.
 * - **Stop** (SIGTERM): unsubscribe, finish what the broker already gave us (up to `drainMs`), then
 *   disconnect; what is left is redelivered to these sessions later.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mqtt, { type IClientOptions, type IConnackPacket, type IPublishPacket, type MqttClient } from 'mqtt';
import type { AttendanceEvent } from '../api/types.js';
import { backoffDelay } from '../core/backoff.js';
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { deliverEvents, type EventsClient } from '../upload/api-sink.js';
import { mqttAccessOptions, type MqttAccess } from '../upload/mqtt-options.js';
import type { ItemOutcome } from '../upload/sink.js';
import { IngestMetrics } from './metrics.js';
import { parsePayload } from './payload.js';

const log = logger('ingest');

export interface IngestOptions {
  url: string;
  access?: MqttAccess;
  /** Topic prefix of the terminals (mqtt.prefix). */
  prefix: string;
  /** Shared subscription group; null: a plain subscription (one ingest only). */
  group: string | null;
  /** Base of the client ids (`<clientId>-0` …): keep it the same across restarts of this process. */
  clientId: string;
  /** Broker connections of this process. */
  connections: number;
  /** Unacknowledged messages the broker may send each connection (MQTT 5 receive maximum). */
  inflight: number;
  /** MQTT protocol: 5, 4 (3.1.1), or auto (5, falling back to 3.1.1 when the broker refuses it). */
  protocol: 5 | 4 | 'auto';
  /**
   * How long the broker keeps an absent process's session and the messages it had not acknowledged
   * (MQTT 5 session expiry; with 3.1.1, 0 means a clean session and anything else a persistent one).
   */
  sessionExpirySec: number;
  api: EventsClient;
  /** Events per add-events request (at most). */
  batchSize: number;
  /** How long a batch waits to fill. */
  batchWaitMs: number;
  /** Requests in flight at once. */
  maxBatchesInFlight: number;
  deadLetterTopic: string;
  dedupeSize: number;
  retryBaseMs: number;
  retryCapMs: number;
  outOnlyRetries: number;
  outOnlyRetryMs: number;
  /** On stop: how long to finish what the broker already gave. */
  drainMs: number;
}

export const INGEST_DEFAULTS = {
  prefix: 'attendance',
  group: 'edge-agent-ingest',
  connections: 4,
  inflight: 500,
  protocol: 'auto',
  sessionExpirySec: 7 * 86_400,
  batchSize: 500,
  batchWaitMs: 20,
  maxBatchesInFlight: 4,
  dedupeSize: 200_000,
  retryBaseMs: 500,
  retryCapMs: 30_000,
  outOnlyRetries: 3,
  outOnlyRetryMs: 2000,
  drainMs: 10_000,
} as const;

/** `<prefix>/ingest/dead-letters` unless configured. */
export function defaultDeadLetterTopic(prefix: string): string {
  return `${prefix.replace(/\/+$/, '')}/ingest/dead-letters`;
}

/** The subscription of one ingest connection. */
export function eventsFilter(prefix: string, group: string | null): string {
  const filter = `${prefix.replace(/\/+$/, '')}/+/+/events`;
  return group ? `$share/${group}/${filter}` : filter;
}

interface Connection {
  index: number;
  client: MqttClient;
  /** Incremented when the connection drops: an acknowledgement of an earlier connection is not sent. */
  generation: number;
  up: boolean;
  /** Sends the PUBACK of `messageId` now. */
  acknowledge(messageId: number): void;
  /** The message whose PUBACK mqtt.js is about to send: held back instead. */
  holding: number | undefined;
  /** When the keepalive timer was last pushed back by a message (Date.now()). */
  aliveAt: number;
}

type SendPacket = (
  packet: { cmd: string; messageId?: number },
  cb?: (err?: Error) => void,
  cbStorePut?: () => void,
  noStore?: boolean,
) => void;

/**
 * mqtt.js sends a message's PUBACK as soon as `handleMessage` calls back, and only then reads the
 * next message. This lets the callback come at once while the PUBACK of that message is held back,
 * to be sent by `acknowledge` later. It relies on mqtt.js 5's internal `_sendPacket` (checked here,
 * and by test/integration/ingest-mqtt.test.ts, which fails if a message is acknowledged early).
 */
function holdAcknowledgements(client: MqttClient, conn: Pick<Connection, 'holding'>): (messageId: number) => void {
  const internal = client as unknown as { _sendPacket?: SendPacket };
  const send = internal._sendPacket?.bind(client);
  if (typeof send !== 'function') {
    throw new AgentError(
      'INTERNAL',
      'this mqtt.js has no _sendPacket: the ingest cannot hold acknowledgements',
      {},
      { hint: 'install the mqtt version of package.json (5.x)' },
    );
  }
  internal._sendPacket = (packet, cb, cbStorePut, noStore) => {
    if (packet.cmd === 'puback' && packet.messageId !== undefined && packet.messageId === conn.holding) {
      conn.holding = undefined;
      cb?.();
      return;
    }
    send(packet, cb, cbStorePut, noStore);
  };
  // Written straight to the connection (never queued for a later one: see `generation`).
  return (messageId) => send({ cmd: 'puback', messageId }, undefined, undefined, true);
}

interface Pending {
  id: string;
  event: AttendanceEvent;
  raw: Buffer;
  recordedAtMs: number | null;
  receivedAt: number;
  /** The acknowledgements owed (a repeat that arrived while in flight adds one). */
  acks: Array<() => void>;
  attempts: number;
  outOnlyTries: number;
}

export class Ingest {
  readonly options: IngestOptions;
  readonly metrics = new IngestMetrics();
  readonly #connections: Connection[] = [];
  readonly #pending = new Map<string, Pending>();
  readonly #ready: Pending[] = [];
  /** Ids accepted lately, oldest first. */
  readonly #accepted = new Map<string, true>();
  #timer: NodeJS.Timeout | null = null;
  #inFlight = 0;
  #requestFailures = 0;
  #stopping = false;
  #lastMessageAt = 0;
  #protocol: 5 | 4 = 5;
  #metricsServer: Server | null = null;
  /** Publishes dead letters: a consumer connection cannot, since it waits on us to read its PUBACK. */
  #publisher: MqttClient | null = null;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(options: IngestOptions) {
    this.options = options;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  get connectionsUp(): number {
    return this.#connections.filter((c) => c.up).length;
  }

  get protocol(): 5 | 4 {
    return this.#protocol;
  }

  /** Connects every connection and subscribes; rejects with INGEST_MQTT_CONNECT when the broker cannot be reached. */
  async start(): Promise<void> {
    const o = this.options;
    this.#protocol = o.protocol === 'auto' ? 5 : o.protocol;
    const first = await this.#connect(0).catch(async (err: unknown) => {
      if (o.protocol !== 'auto' || !isProtocolRefusal(err)) throw err;
      log.warn({ url: o.url }, 'the broker does not speak MQTT 5; using MQTT 3.1.1');
      this.#protocol = 4;
      return this.#connect(0);
    });
    if (this.#protocol === 5 && o.group && first.sharedSubscriptionAvailable === false) {
      await this.close();
      throw new AgentError('INGEST_NO_SHARED_SUBSCRIPTIONS', `the broker at ${o.url} says it has no shared subscriptions`, { url: o.url });
    }
    if (this.#protocol === 4 && o.group)
      log.info({ url: o.url }, 'MQTT 3.1.1: the broker cannot say whether it shares $share subscriptions (Mosquitto does)');
    await Promise.all(Array.from({ length: o.connections - 1 }, (_, i) => this.#connect(i + 1)));
    this.#publisher = mqtt.connect(o.url, {
      ...mqttAccessOptions(o.access ?? {}),
      clientId: `${o.clientId}-dead-letters`,
      clean: true,
      protocolVersion: this.#protocol,
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
    });
    this.#publisher.on('error', (err) => log.warn({ err: err.message }, 'dead-letter connection error'));
    log.info(
      {
        url: o.url,
        filter: eventsFilter(o.prefix, o.group),
        connections: o.connections,
        protocol: this.#protocol === 5 ? 'MQTT 5' : 'MQTT 3.1.1',
      },
      'ingest subscribed',
    );
  }

  /** Opens connection `index` and resolves with its first CONNACK's properties. */
  #connect(index: number): Promise<{ sharedSubscriptionAvailable?: boolean }> {
    const o = this.options;
    const opts: IClientOptions = {
      ...mqttAccessOptions(o.access ?? {}),
      clientId: `${o.clientId}-${index}`,
      clean: this.#protocol === 4 && o.sessionExpirySec === 0,
      protocolVersion: this.#protocol,
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
      resubscribe: false,
      ...(this.#protocol === 5 ? { properties: { sessionExpiryInterval: o.sessionExpirySec, receiveMaximum: o.inflight } } : {}),
    };
    const client = mqtt.connect(o.url, opts);
    const conn: Connection = { index, client, generation: 0, up: false, holding: undefined, acknowledge: () => undefined, aliveAt: 0 };
    conn.acknowledge = holdAcknowledgements(client, conn);
    client.handleMessage = (packet, done) => this.#onMessage(conn, packet, done);
    const filter = eventsFilter(o.prefix, o.group);
    client.on('connect', () => {
      conn.up = true;
      // Always subscribe: a session that outlived an unsubscribe (a drained stop) has none.
      client.subscribe(filter, { qos: 1 }, (err, granted) => {
        if (err) log.error({ err: err.message, filter }, 'subscribe failed');
        else if (granted?.some((g) => g.qos > 2)) log.error({ filter, granted }, 'the broker refused the subscription');
      });
    });
    client.on('close', () => {
      if (conn.up) log.warn({ clientId: opts.clientId }, 'broker connection lost; reconnecting');
      conn.up = false;
      conn.generation++;
    });
    client.on('error', (err) => log.warn({ err: err.message, clientId: opts.clientId }, 'broker connection error'));
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => {
        cleanup();
        client.end(true);
        reject(
          new AgentError(
            'INGEST_MQTT_CONNECT',
            `cannot connect to the broker at ${o.url}: ${err.message}`,
            { url: o.url, clientId: opts.clientId, reasonCode: (err as { code?: unknown }).code ?? null },
            { cause: err, retryable: true },
          ),
        );
      };
      const timer = setTimeout(() => fail(new Error('no answer in 10 s')), 10_000);
      const onConnect = (connack: IConnackPacket) => {
        cleanup();
        this.#connections.push(conn);
        resolve({
          ...(connack.properties?.sharedSubscriptionAvailable !== undefined
            ? { sharedSubscriptionAvailable: connack.properties.sharedSubscriptionAvailable }
            : {}),
        });
      };
      const onError = (err: Error) => fail(err);
      function cleanup() {
        clearTimeout(timer);
        client.off('connect', onConnect);
        client.off('error', onError);
      }
      client.once('connect', onConnect);
      client.once('error', onError);
    });
  }

  #onMessage(conn: Connection, packet: IPublishPacket, done: (err?: Error) => void): void {
    const now = Date.now();
    this.#lastMessageAt = now;
    // A message from the broker shows the connection is alive: the ping waits. mqtt.js counts only
    // PINGRESPs and acks, and a busy broker sends its PINGRESP after the messages queued before it.
    if (now - conn.aliveAt > 1000) {
      conn.aliveAt = now;
      conn.client.reschedulePing(true);
    }
    this.metrics.received++;
    this.metrics.receivedRate.add(1, now);
    if (packet.dup) this.metrics.redelivered++;
    const generation = conn.generation;
    const { messageId } = packet;
    // After a reconnect the broker sends the message again; that copy gets the acknowledgement.
    const ack =
      packet.qos > 0 && messageId !== undefined
        ? () => {
            if (conn.generation === generation && conn.client.connected) conn.acknowledge(messageId);
          }
        : () => undefined;
    // mqtt.js may take the next message now; this one's PUBACK waits for `ack`.
    conn.holding = packet.qos > 0 ? messageId : undefined;
    done();
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    const parsed = parsePayload(payload);
    if (!parsed.ok) {
      log.warn({ topic: packet.topic, reason: parsed.reason }, 'message is not a punch; dead letter');
      void this.#deadLetter({ raw: payload, acks: [ack] }, 'INVALID_PAYLOAD', parsed.reason, packet.topic);
      return;
    }
    const { id } = parsed.value;
    if (this.#accepted.has(id)) {
      this.metrics.duplicates++;
      ack();
      return;
    }
    const inFlight = this.#pending.get(id);
    if (inFlight) {
      this.metrics.duplicates++;
      inFlight.acks.push(ack);
      return;
    }
    const p: Pending = {
      id,
      event: parsed.value.event,
      raw: payload,
      recordedAtMs: parsed.value.recordedAtMs,
      receivedAt: now,
      acks: [ack],
      attempts: 0,
      outOnlyTries: 0,
    };
    this.#pending.set(id, p);
    this.#ready.push(p);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#ready.length === 0) return;
    const o = this.options;
    if (this.#ready.length >= o.batchSize || this.#stopping) {
      this.#flush();
      return;
    }
    this.#timer ??= setTimeout(() => this.#flush(), o.batchWaitMs);
  }

  #flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    while (this.#ready.length > 0 && this.#inFlight < this.options.maxBatchesInFlight) {
      const batch = this.#ready.splice(0, this.options.batchSize);
      this.#inFlight++;
      void this.#send(batch).finally(() => {
        this.#inFlight--;
        this.#schedule();
      });
    }
  }

  #later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  #requeue(items: Pending[]): void {
    this.#ready.push(...items);
    this.#schedule();
  }

  async #send(batch: Pending[]): Promise<void> {
    const o = this.options;
    this.metrics.apiRequests++;
    let outcomes: ItemOutcome[];
    try {
      outcomes = await deliverEvents(
        o.api,
        batch.map((p) => p.event),
      );
      this.#requestFailures = 0;
    } catch (err) {
      this.metrics.apiFailures++;
      const delay = backoffDelay(this.#requestFailures++, { baseMs: o.retryBaseMs, capMs: o.retryCapMs });
      const e = err as AgentError;
      log.warn(
        { err: { code: e.code, message: e.message }, events: batch.length, retryInMs: delay },
        'the attendance API did not take the batch; it is retried (not acknowledged meanwhile)',
      );
      this.#later(delay, () => this.#requeue(batch));
      return;
    }
    const retry: Pending[] = [];
    for (const [i, p] of batch.entries()) {
      const outcome = outcomes[i]!;
      if (outcome.outcome === 'delivered') this.#accept(p);
      else if (outcome.outcome === 'dead') {
        const outOnly = p.event.inTime === undefined && p.event.outTime !== undefined;
        if (outOnly && outcome.status === 'INVALID_PARAMETERS' && p.outOnlyTries < o.outOnlyRetries) {
          // Its check-in may be in another consumer's batch: try again a little later.
          p.outOnlyTries++;
          this.#later(o.outOnlyRetryMs, () => this.#requeue([p]));
        } else void this.#deadLetter(p, outcome.status, outcome.description);
      } else {
        p.attempts++;
        retry.push(p);
      }
    }
    if (retry.length) {
      const delay = backoffDelay(Math.max(...retry.map((p) => p.attempts)) - 1, { baseMs: o.retryBaseMs, capMs: o.retryCapMs });
      log.warn({ events: retry.length, retryInMs: delay }, 'the attendance API answered ERROR for some events; they are retried');
      this.#later(delay, () => this.#requeue(retry));
    }
  }

  #remember(id: string): void {
    this.#accepted.set(id, true);
    if (this.#accepted.size > this.options.dedupeSize) this.#accepted.delete(this.#accepted.keys().next().value!);
  }

  #accept(p: Pending): void {
    const now = Date.now();
    this.#remember(p.id);
    this.#pending.delete(p.id);
    for (const ack of p.acks) ack();
    this.metrics.accepted++;
    this.metrics.acceptedRate.add(1, now);
    this.metrics.commit.observe((now - p.receivedAt) / 1000);
    if (p.recordedAtMs !== null) this.metrics.lag.observe(Math.max(0, now - p.recordedAtMs) / 1000);
  }

  /** Publishes the refusal (QoS 1), then acknowledges; while the broker cannot take it, tries again. */
  async #deadLetter(
    p: Pick<Pending, 'raw' | 'acks'> & { id?: string },
    status: string,
    description: string,
    topic?: string,
    attempt = 0,
  ): Promise<void> {
    const o = this.options;
    let original: unknown;
    try {
      original = JSON.parse(p.raw.toString('utf8'));
    } catch {
      original = p.raw.toString('utf8').slice(0, 2048);
    }
    const body = JSON.stringify({
      status,
      description,
      refusedAt: new Date().toISOString(),
      ingest: o.clientId,
      ...(topic ? { topic } : {}),
      event: original,
    });
    const publisher = this.#publisher;
    try {
      if (!publisher?.connected) throw new Error('no broker connection');
      await withTimeout(publisher.publishAsync(o.deadLetterTopic, body, { qos: 1 }), 10_000);
    } catch (err) {
      const delay = backoffDelay(attempt, { baseMs: o.retryBaseMs, capMs: o.retryCapMs });
      log.warn({ err: (err as Error).message, retryInMs: delay }, 'cannot publish a dead letter yet');
      this.#later(delay, () => void this.#deadLetter(p, status, description, topic, attempt + 1));
      return;
    }
    log.warn({ id: p.id ?? null, status, description }, 'event refused for good: published to the dead-letter topic');
    this.metrics.deadLetter(status);
    if (p.id !== undefined) {
      this.#remember(p.id);
      this.#pending.delete(p.id);
    }
    for (const ack of p.acks) ack();
  }

  /** Serves `GET /metrics` (Prometheus text) and `GET /health` (JSON); resolves with the URL. */
  async listenMetrics(port: number, host = '127.0.0.1'): Promise<string> {
    const srv = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path === '/metrics') {
        void this.metrics.render(this.#gauges()).then((text) => {
          res.writeHead(200, { 'content-type': this.metrics.contentType });
          res.end(text);
        });
      } else if (req.method === 'GET' && path === '/health') {
        const g = this.#gauges();
        const healthy = g.connectionsUp === g.connections && !this.#stopping;
        res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ healthy, ...g, accepted: this.metrics.accepted, protocol: this.#protocol === 5 ? 'MQTT 5' : 'MQTT 3.1.1' }),
        );
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('GET /metrics or /health\n');
      }
    });
    await new Promise<void>((resolve, reject) => {
      srv.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new AgentError(
            'INGEST_METRICS_LISTEN',
            `cannot listen on ${host}:${port} for /metrics: ${err.message}`,
            { host, port, errno: err.code ?? null },
            { cause: err },
          ),
        ),
      );
      srv.listen(port, host, () => resolve());
    });
    this.#metricsServer = srv;
    const addr = srv.address() as AddressInfo;
    return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  }

  #gauges() {
    let oldest = 0;
    const now = Date.now();
    for (const p of this.#pending.values()) oldest = Math.max(oldest, (now - p.receivedAt) / 1000);
    return {
      pending: this.#pending.size,
      oldestPendingSec: oldest,
      connectionsUp: this.connectionsUp,
      connections: this.options.connections,
    };
  }

  /**
   * Unsubscribes, finishes what the broker already gave (until nothing came for 300 ms and nothing
   * is pending, at most `drainMs`), then disconnects. Unfinished messages stay in the sessions.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    const filter = eventsFilter(this.options.prefix, this.options.group);
    await Promise.all(
      this.#connections.filter((c) => c.up).map((c) => withTimeout(c.client.unsubscribeAsync(filter), 2000).catch(() => undefined)),
    );
    this.#flush();
    const deadline = Date.now() + this.options.drainMs;
    while (Date.now() < deadline && (this.#pending.size > 0 || Date.now() - this.#lastMessageAt < 300)) {
      this.#flush();
      await new Promise((r) => setTimeout(r, 50));
    }
    if (this.#pending.size > 0)
      log.warn({ pending: this.#pending.size }, 'stopping with events not yet accepted: the broker sends them again to these sessions');
    await this.close();
  }

  /** Disconnects at once (nothing more is acknowledged). */
  async close(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearTimeout(this.#timer);
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    // Acknowledgements from now on would go to connections being closed.
    for (const c of this.#connections) c.generation++;
    const clients = [...this.#connections.map((c) => c.client), ...(this.#publisher ? [this.#publisher] : [])];
    this.#publisher = null;
    await Promise.all(clients.map((c) => withTimeout(c.endAsync(), 2000).catch(() => c.end(true))));
    const srv = this.#metricsServer;
    this.#metricsServer = null;
    if (srv) await new Promise<void>((r) => srv.close(() => r()));
  }
}

function isProtocolRefusal(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown; message?: string } }).cause;
  return cause?.code === 1 || cause?.code === 132 || /protocol|unsupported|refused/i.test(cause?.message ?? '');
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(t);
        reject(err as Error);
      },
    );
  });
}
