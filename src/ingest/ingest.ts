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
 *   PUBACK it would send is held back (`holdAcknowledgements` in consumer-connection.ts), and the
 *   PUBACKs of a batch are sent together when the API has answered. The broker's in-flight window
 *   bounds what is held: `inflight` per connection (MQTT 5 receive maximum; with 3.1.1 the
 *   broker's setting, Mosquitto's max_inflight_messages, 20 by default). A process may keep
 *   several connections (`connections`, each a member of the group with its own persistent
 *   session) to hold more.
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
 *
 * The parts: ingest-options.ts (options, defaults, topics), consumer-connection.ts (one broker
 * connection with held PUBACKs), dead-letters.ts (the dead-letter publisher), metrics.ts and
 * metrics-server.ts (`/metrics`, `/health`); this file takes, batches, delivers and acknowledges.
 */
import type { Server } from 'node:http';
import type { IPublishPacket } from 'mqtt';
import type { AttendanceEvent } from '../api/types.js';
import { backoffDelay } from '../core/backoff.js';
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { withTimeout } from '../core/time.js';
import { deliverEvents } from '../upload/api-sink.js';
import type { ItemOutcome } from '../upload/sink.js';
import { type Connection, isProtocolRefusal, openConsumerConnection } from './consumer-connection.js';
import { DeadLetters } from './dead-letters.js';
import { eventsFilter, type IngestOptions } from './ingest-options.js';
import { IngestMetrics } from './metrics.js';
import { listenMetrics } from './metrics-server.js';
import { parsePayload } from './payload.js';

export { defaultDeadLetterTopic, eventsFilter, INGEST_DEFAULTS, type IngestOptions } from './ingest-options.js';

const log = logger('ingest');

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
  readonly #deadLetters: DeadLetters;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(options: IngestOptions) {
    this.options = options;
    this.#deadLetters = new DeadLetters(options);
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
    this.#deadLetters.open(this.#protocol);
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

  /** Opens consumer connection `index` and resolves with its first CONNACK's properties. */
  async #connect(index: number): Promise<{ sharedSubscriptionAvailable?: boolean }> {
    const { connection, ...connack } = await openConsumerConnection(this.options, index, this.#protocol, (conn, packet, done) =>
      this.#onMessage(conn, packet, done),
    );
    this.#connections.push(connection);
    return connack;
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

  /** Publishes the refusal to the dead-letter topic, then acknowledges (see dead-letters.ts). */
  #deadLetter(p: Pick<Pending, 'raw' | 'acks'> & { id?: string }, status: string, description: string, topic?: string): Promise<void> {
    return this.#deadLetters.send({ raw: p.raw, status, description, ...(topic ? { topic } : {}) }, () => {
      log.warn({ id: p.id ?? null, status, description }, 'event refused for good: published to the dead-letter topic');
      this.metrics.deadLetter(status);
      if (p.id !== undefined) {
        this.#remember(p.id);
        this.#pending.delete(p.id);
      }
      for (const ack of p.acks) ack();
    });
  }

  /** Serves `GET /metrics` (Prometheus text) and `GET /health` (JSON); resolves with the URL. */
  async listenMetrics(port: number, host = '127.0.0.1'): Promise<string> {
    const { server, url } = await listenMetrics(port, host, {
      metrics: () => this.metrics.render(this.#gauges()),
      contentType: this.metrics.contentType,
      health: () => {
        const g = this.#gauges();
        const healthy = g.connectionsUp === g.connections && !this.#stopping;
        return { healthy, ...g, accepted: this.metrics.accepted, protocol: this.#protocol === 5 ? 'MQTT 5' : 'MQTT 3.1.1' };
      },
    });
    this.#metricsServer = server;
    return url;
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
    await Promise.all([
      ...this.#connections.map(({ client }) => withTimeout(client.endAsync(), 2000).catch(() => client.end(true))),
      this.#deadLetters.close(),
    ]);
    const srv = this.#metricsServer;
    this.#metricsServer = null;
    if (srv) await new Promise<void>((r) => srv.close(() => r()));
  }
}
