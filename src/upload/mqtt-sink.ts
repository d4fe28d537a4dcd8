/**
 * The `mqtt` sink: each punch is published as JSON with QoS 1 to
 * `<prefix>/<site>/<terminal>/events`, and counts as delivered when the broker's PUBACK arrives.
 * The id (a ULID) is in the payload so consumers drop the duplicates at-least-once delivery can
 * make (a crash between PUBACK and the outbox commit, a PUBACK lost with the connection).
 *
 * The session is persistent (`clean: false`, client id `options.clientId`: the daemon's is
 * `<terminal>-events-<12 hex>` derived from a secret, see eventsClientId), and the connection
 * is re-made with exponential backoff and full jitter after the broker goes away. While it is
 * down, `deliver` throws `MQTT_UNAVAILABLE` (retryable) and the punches wait in the outbox, not
 * in memory.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { AgentError } from '../core/errors.js';
import { RepeatedWarning } from '../core/repeated-warning.js';
import { backoffDelay } from '../core/backoff.js';
import { logger } from '../core/logger.js';
import type { OutboxItem } from '../store/outbox.js';
import type { DeliverOptions, ItemOutcome, Sink } from './sink.js';

import { mqttAccessOptions, type MqttAccess } from './mqtt-options.js';
import { publishChecked } from './mqtt-publish.js';

const log = logger('upload:mqtt');

export interface MqttSinkOptions extends MqttAccess {
  url: string;
  prefix: string;
  site: string;
  terminal: string;
  /** The persistent session's client id; `<terminal>-events` when not given. */
  clientId?: string;
  /** How long a batch waits for its PUBACKs before the missing ones are retried. Default 10 s. */
  publishTimeoutMs?: number;
  reconnectBaseMs?: number;
  reconnectCapMs?: number;
}

export function eventsTopic(prefix: string, site: string, terminal: string): string {
  return `${prefix.replace(/\/+$/, '')}/${site}/${terminal}/events`;
}

/** The JSON published for one punch. */
export function eventPayload(item: OutboxItem, site: string): Record<string, unknown> {
  return {
    id: item.id,
    terminal: item.terminalId,
    site,
    employeeCode: item.employeeCode,
    direction: item.direction,
    time: item.localTime,
    tzOffset: item.tzOffset,
    inTime: item.inTime,
    shift: item.shift,
    source: item.source,
    score: item.score,
    clockSynced: item.clockSynced,
    clockCorrected: item.clockCorrected,
    clockReleased: item.clockReleased,
    timeSource: item.timeSource,
    recordedAt: new Date(item.createdAt).toISOString(),
  };
}

export class MqttSink implements Sink {
  readonly name = 'mqtt';
  readonly topic: string;
  readonly #o: MqttSinkOptions;
  #client: MqttClient | null = null;
  #closing = false;
  #reconnectAttempt = 0;
  #reconnectTimer: NodeJS.Timeout | null = null;
  readonly #away = new RepeatedWarning(log);

  constructor(options: MqttSinkOptions) {
    this.#o = options;
    this.topic = eventsTopic(options.prefix, options.site, options.terminal);
  }

  get connected(): boolean {
    return this.#client?.connected === true;
  }

  async start(): Promise<void> {
    if (this.#client) return;
    const o = this.#o;
    const opts: IClientOptions = {
      ...mqttAccessOptions(o),
      clientId: o.clientId ?? `${o.terminal}-events`,
      clean: false,
      reconnectPeriod: 0, // reconnects are ours, with backoff
      connectTimeout: 10_000,
      queueQoSZero: false,
    };
    const client = mqtt.connect(o.url, opts);
    this.#client = client;
    client.on('connect', () => {
      this.#reconnectAttempt = 0;
      if (this.#away.failures) this.#away.ok({ url: o.url, topic: this.topic }, 'connected to the broker again');
      else log.info({ url: o.url, topic: this.topic }, 'connected to the broker');
    });
    client.on('error', (err) => {
      if (!this.#closing)
        this.#away.warn({ url: o.url, err: err.message }, 'cannot reach the broker to deliver punches; they wait in the outbox');
    });
    client.on('close', () => this.#scheduleReconnect());
    // Wait for the first connection attempt, but never hold the daemon's start on a broker that
    // does not answer: the punches wait in the outbox and the reconnects go on.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), 2000);
      timer.unref();
      function done() {
        clearTimeout(timer);
        client.off('connect', done);
        client.off('close', done);
        resolve();
      }
      client.once('connect', done);
      client.once('close', done);
    });
  }

  #scheduleReconnect(): void {
    if (this.#closing || this.#reconnectTimer || !this.#client) return;
    const delay = backoffDelay(this.#reconnectAttempt++, {
      baseMs: this.#o.reconnectBaseMs ?? 500,
      capMs: this.#o.reconnectCapMs ?? 30_000,
    });
    log.debug({ delayMs: delay }, 'broker connection lost; reconnecting');
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      if (!this.#closing && this.#client && !this.#client.connected) this.#client.reconnect();
    }, delay);
    this.#reconnectTimer.unref();
  }

  async deliver(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]> {
    if (items.length === 0) return [];
    const current = this.#client;
    if (!current?.connected) {
      throw new AgentError(
        'MQTT_UNAVAILABLE',
        `not connected to the MQTT broker at ${this.#o.url}`,
        { url: this.#o.url },
        {
          hint: 'check mqtt.url and that the broker runs; punches wait in the outbox and go when it is back',
          retryable: true,
        },
      );
    }
    const client: MqttClient = current;
    const outcomes: ItemOutcome[] = items.map(() => ({ outcome: 'retry', description: 'no PUBACK from the broker in time' }));
    const publishes = items.map((item, i) =>
      publishChecked(client, this.topic, JSON.stringify(eventPayload(item, this.#o.site)), { qos: 1 }).then(
        () => {
          outcomes[i] = { outcome: 'delivered' };
        },
        (err: AgentError) => {
          // A punch MQTT cannot carry is never sent (it would poison mqtt.js's store): a dead letter.
          outcomes[i] =
            err.code === 'MQTT_PUBLISH_INVALID'
              ? { outcome: 'dead', status: err.code, description: err.message }
              : { outcome: 'retry', description: `publish failed: ${err.message}` };
        },
      ),
    );
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, this.#o.publishTimeoutMs ?? 10_000);
      const onAbort = () => finish();
      options.signal.addEventListener('abort', onAbort, { once: true });
      client.once('close', finish);
      void Promise.all(publishes).then(finish);
      function finish() {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        client.off('close', finish);
        resolve();
      }
    });
    if (!client.connected && outcomes.some((o) => o.outcome !== 'delivered')) {
      // The broker went away mid-batch: the whole batch waits for the reconnect (what was already
      // acknowledged goes again; consumers drop it by id).
      throw new AgentError(
        'MQTT_UNAVAILABLE',
        `the connection to the MQTT broker at ${this.#o.url} was lost during a batch`,
        { url: this.#o.url },
        {
          hint: 'check that the broker runs; punches wait in the outbox and go when it is back',
          retryable: true,
        },
      );
    }
    // On abort (release), what was acknowledged counts as delivered; the rest stays pending.
    return outcomes;
  }

  async close(): Promise<void> {
    this.#closing = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = null;
    const client = this.#client;
    this.#client = null;
    if (client) {
      // end() can wait on a connection attempt to a broker that is gone: do not hang on it.
      await Promise.race([client.endAsync(true).catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
      client.removeAllListeners();
    }
  }
}
