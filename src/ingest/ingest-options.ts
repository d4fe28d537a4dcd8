/**
 * What one ingest process is told (the `edge-agent ingest` flags), its defaults, and the two
 * topics it derives from the prefix: the events it subscribes to and the dead-letter topic.
 */
import type { EventsClient } from '../upload/api-sink.js';
import type { MqttAccess } from '../upload/mqtt-options.js';

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
