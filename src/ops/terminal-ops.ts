/**
 * One terminal's presence on the broker: the retained state with its last will, the retained
 * info, the metrics every N seconds, and the request/response commands.
 *
 * The connection never blocks the agent: while the broker is away the agent punches and queues
 * as usual; on every (re)connection the state, info and metrics are published again.
 *
 * Tested in test/integration/ops-mqtt.test.ts (retained state, info and metrics over a real broker,
 * the last will, MQTT's limits) and test/integration/cli-management.test.ts.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { TypedEmitter } from '../core/events.js';
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { publishChecked } from '../upload/mqtt-publish.js';
import { RepeatedWarning } from '../core/repeated-warning.js';
import { ThrottledLog } from './throttled-log.js';
import type { CommandResponse, CommandRouter } from './commands.js';
import { requestTopic, responseTopic, terminalTopic, type TopicBase } from './topics.js';
import { StateSince } from './terminal-state.js';

export interface TerminalOpsOptions {
  url: string;
  /** Connection options (credentials, TLS); the will and clientId are set here. */
  mqttOptions?: IClientOptions;
  base: TopicBase;
  info: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  metrics: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  metricsIntervalMs: number;
  router: CommandRouter;
  /** The largest payload published (mqtt.maxPayloadBytes). */
  maxPayloadBytes?: number;
}

export interface TerminalOpsEvents extends Record<string, unknown> {
  connected: undefined;
  disconnected: undefined;
  request: { command: string; response: CommandResponse };
}

const log = logger('ops:terminal');

export class TerminalOps extends TypedEmitter<TerminalOpsEvents> {
  readonly #o: TerminalOpsOptions;
  #client: MqttClient | null = null;
  #timer: NodeJS.Timeout | null = null;
  #connected = false;
  #stopping = false;
  #lastPublishAt: string | null = null;
  /** The state word last published on this connection (online or degraded), and since when it holds. */
  #word: string | null = null;
  readonly #since = new StateSince<string>();
  /** Per retained leaf: the last gather-and-publish, and the one waiting to start (see #inOrder). */
  readonly #queues = {
    info: { tail: Promise.resolve(), waiting: null as Promise<void> | null },
    metrics: { tail: Promise.resolve(), waiting: null as Promise<void> | null },
  };
  /** The broker away: one warning, then fewer and fewer, each with the count left out. */
  readonly #away = new RepeatedWarning(log);
  /** Error answers: anyone on the broker can send a request that earns one, as fast as it likes. */
  readonly #refusals = new ThrottledLog(log);

  constructor(options: TerminalOpsOptions) {
    super();
    this.#o = options;
  }

  get connected(): boolean {
    return this.#connected;
  }

  get lastPublishAt(): string | null {
    return this.#lastPublishAt;
  }

  /** Connects in the background; resolves at once (or when first connected if `waitMs` is given). */
  async start(waitMs = 0): Promise<void> {
    const b = this.#o.base;
    const client = mqtt.connect(this.#o.url, {
      ...this.#o.mqttOptions,
      clientId: this.#o.mqttOptions?.clientId ?? `${b.terminal}-ops`,
      clean: true,
      will: { topic: terminalTopic(b, 'state'), payload: Buffer.from('lost'), qos: 1, retain: true },
    });
    this.#client = client;
    client.on('connect', () => {
      this.#connected = true;
      if (this.#away.failures) this.#away.ok({ url: this.#o.url }, 'connected to the broker again');
      else log.info({ url: this.#o.url }, 'connected to the broker');
      void this.#onConnect();
    });
    client.on('close', () => {
      if (this.#connected) {
        this.#connected = false;
        // A clean stop (Ctrl-C, systemctl stop) closes the connection too: nothing was lost.
        if (!this.#stopping) this.#away.warn({ url: this.#o.url }, 'lost the broker; reconnecting');
        this.emit('disconnected', undefined);
      }
    });
    client.on('error', (err) => {
      if (!this.#stopping) this.#away.warn({ url: this.#o.url, err: err.message }, 'cannot reach the broker; reconnecting');
    });
    client.on('message', (topic, payload) => {
      this.#onMessage(topic, payload).catch((err: unknown) =>
        log.error({ err: toAgentError(err).toJSON() }, 'a request could not be handled'),
      );
    });
    this.#timer = setInterval(() => void this.publishMetrics(), this.#o.metricsIntervalMs);
    this.#timer.unref();
    if (waitMs > 0 && !this.#connected) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, waitMs);
        this.once('connected', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async #onConnect(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    const b = this.#o.base;
    try {
      await client.subscribeAsync(requestTopic(b, '+'), { qos: 1 });
      // A new connection: the others saw it lost or offline, so the state begins again. The
      // metrics publish the state word (online or degraded) after themselves.
      this.#word = null;
      this.#since.reset();
      await this.publishInfo();
      await this.publishMetrics();
      if (this.#word === null) await this.#publishWord('online');
      this.emit('connected', undefined);
    } catch (err) {
      const e = toAgentError(err, 'MQTT_PUBLISH_FAILED');
      log.warn({ code: e.code, err: e.message }, 'could not publish the state after connecting');
    }
  }

  async #onMessage(topic: string, payload: Buffer): Promise<void> {
    const prefix = terminalTopic(this.#o.base, 'req/');
    if (!topic.startsWith(prefix)) return;
    const command = topic.slice(prefix.length);
    const response = await this.#o.router.handle(command, payload);
    if (response.status === 'error')
      this.#refusals.warn(
        { command: response.command, transaction: response.transaction, error: response.error },
        'command answered with an error',
      );
    else log.info({ command, transaction: response.transaction }, 'command answered');
    const client = this.#client;
    if (client) {
      try {
        await publishChecked(client, responseTopic(this.#o.base, command), JSON.stringify(response), { qos: 1 }, this.#o.maxPayloadBytes);
      } catch (err) {
        const e = toAgentError(err, 'MQTT_PUBLISH_FAILED');
        log.warn({ code: e.code, err: e.message, command: response.command }, 'could not publish a response');
      }
    }
    this.emit('request', { command, response });
  }

  async #publish(leaf: string, value: unknown, retain: boolean): Promise<void> {
    const client = this.#client;
    if (!client || !this.#connected) return;
    try {
      await publishChecked(client, terminalTopic(this.#o.base, leaf), JSON.stringify(value), { qos: 1, retain }, this.#o.maxPayloadBytes);
      this.#lastPublishAt = new Date().toISOString();
    } catch (err) {
      const e = toAgentError(err, 'MQTT_PUBLISH_FAILED');
      log.warn({ code: e.code, err: e.message, leaf }, 'publish failed');
    }
  }

  /**
   * Gathers and publishes one retained leaf, one at a time and in the order asked. Gathering
   * takes a while (the outbox, the scanners): run side by side, the snapshot gathered on connect
   * ("connecting") was published after the one a scanner's "ready" asked for, and the fleet saw
   * the terminal degraded until the next metrics. A call made while one is waiting to start
   * shares it: that one gathers the newest state anyway.
   */
  #inOrder(leaf: 'info' | 'metrics', run: () => Promise<void>): Promise<void> {
    const q = this.#queues[leaf];
    if (q.waiting) return q.waiting;
    const next = q.tail.then(() => {
      q.waiting = null;
      return run();
    });
    q.waiting = next;
    q.tail = next.catch(() => undefined);
    return next;
  }

  publishInfo(): Promise<void> {
    return this.#inOrder('info', async () => {
      try {
        await this.#publish('info', { ...(await this.#o.info()), at: new Date().toISOString() }, true);
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'could not gather info');
      }
    });
  }

  /**
   * Gathers and publishes the metrics, with the state they make (`state`: online or degraded,
   * from their `health`) and since when it holds (`stateSince`: the last change, not this
   * publish); then the state topic when the word changed (src/ops/terminal-state.ts).
   */
  publishMetrics(): Promise<void> {
    if (!this.#connected) return Promise.resolve();
    return this.#inOrder('metrics', async () => {
      let doc: Record<string, unknown>;
      try {
        doc = await this.#o.metrics();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'could not gather metrics');
        return;
      }
      const now = Date.now();
      const word = doc.health === 'degraded' ? 'degraded' : 'online';
      const since = this.#since.update(word, now);
      await this.#publish(
        'metrics',
        { ...doc, state: word, stateSince: new Date(since).toISOString(), at: new Date(now).toISOString() },
        true,
      );
      if (word !== this.#word) await this.#publishWord(word);
    });
  }

  async #publishWord(word: string): Promise<void> {
    const client = this.#client;
    if (!client || !this.#connected) return;
    try {
      await publishChecked(client, terminalTopic(this.#o.base, 'state'), word, { qos: 1, retain: true }, this.#o.maxPayloadBytes);
      this.#word = word;
    } catch (err) {
      const e = toAgentError(err, 'MQTT_PUBLISH_FAILED');
      log.warn({ code: e.code, err: e.message }, 'could not publish the state');
    }
  }

  /** Publishes `offline` (a clean stop) and disconnects; the last will is not sent. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    const client = this.#client;
    this.#client = null;
    if (!client) return;
    if (this.#connected) {
      try {
        await Promise.race([
          publishChecked(client, terminalTopic(this.#o.base, 'state'), 'offline', { qos: 1, retain: true }),
          new Promise((r) => setTimeout(r, 2000)),
        ]);
      } catch {
        // the broker is gone; it will publish nothing (clean disconnect never happened)
      }
    }
    await client.endAsync(false).catch(() => undefined);
    this.#connected = false;
  }
}
