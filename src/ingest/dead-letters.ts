/**
 * The dead-letter topic: an event the attendance API refused for good (or a message that is not a
 * punch) is published there, QoS 1, as JSON with the status, the description, when and by which
 * ingest it was refused, the topic it came on (for a message that is not a punch) and the original
 * message; only then is the message acknowledged (the caller's `published`). While the broker
 * cannot take it, it is tried again with backoff, never dropped.
 *
 * It has its own connection: a consumer connection cannot publish, since the broker waits on it
 * to read its PUBACKs.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { backoffDelay } from '../core/backoff.js';
import { logger } from '../core/logger.js';
import { withTimeout } from '../core/time.js';
import { mqttAccessOptions } from '../upload/mqtt-options.js';
import type { IngestOptions } from './ingest-options.js';

const log = logger('ingest');

export interface DeadLetter {
  /** The message as it came. */
  raw: Buffer;
  status: string;
  description: string;
  /** The topic it came on, for a message that is not a punch. */
  topic?: string;
}

type DeadLetterOptions = Pick<IngestOptions, 'url' | 'access' | 'clientId' | 'deadLetterTopic' | 'retryBaseMs' | 'retryCapMs'>;

export class DeadLetters {
  readonly #o: DeadLetterOptions;
  #client: MqttClient | null = null;
  #closed = false;
  readonly #retries = new Set<NodeJS.Timeout>();

  constructor(options: DeadLetterOptions) {
    this.#o = options;
  }

  /** Connects the publisher (`<clientId>-dead-letters`, a clean session) with the consumers' protocol. */
  open(protocol: 5 | 4): void {
    this.#client = mqtt.connect(this.#o.url, {
      ...mqttAccessOptions(this.#o.access ?? {}),
      clientId: `${this.#o.clientId}-dead-letters`,
      clean: true,
      protocolVersion: protocol,
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
    });
    this.#client.on('error', (err) => log.warn({ err: err.message }, 'dead-letter connection error'));
  }

  /** The document published for `letter`. */
  document(letter: DeadLetter, refusedAt = new Date()): string {
    let original: unknown;
    try {
      original = JSON.parse(letter.raw.toString('utf8'));
    } catch {
      original = letter.raw.toString('utf8').slice(0, 2048);
    }
    return JSON.stringify({
      status: letter.status,
      description: letter.description,
      refusedAt: refusedAt.toISOString(),
      ingest: this.#o.clientId,
      ...(letter.topic ? { topic: letter.topic } : {}),
      event: original,
    });
  }

  /**
   * Publishes `letter` (QoS 1), then calls `published`; while the broker cannot take it (or the
   * publisher is not connected yet), tries again with backoff, until `close`.
   */
  async send(letter: DeadLetter, published: () => void, attempt = 0): Promise<void> {
    const client = this.#client;
    try {
      if (!client?.connected) throw new Error('no broker connection');
      await withTimeout(client.publishAsync(this.#o.deadLetterTopic, this.document(letter), { qos: 1 }), 10_000);
    } catch (err) {
      if (this.#closed) return;
      const delay = backoffDelay(attempt, { baseMs: this.#o.retryBaseMs, capMs: this.#o.retryCapMs });
      log.warn({ err: (err as Error).message, retryInMs: delay }, 'cannot publish a dead letter yet');
      const t = setTimeout(() => {
        this.#retries.delete(t);
        void this.send(letter, published, attempt + 1);
      }, delay);
      this.#retries.add(t);
      return;
    }
    published();
  }

  /** Stops the retries and disconnects (what was not published stays unacknowledged). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#retries) clearTimeout(t);
    this.#retries.clear();
    const client = this.#client;
    this.#client = null;
    if (client) await withTimeout(client.endAsync(), 2000).catch(() => client.end(true));
  }
}
