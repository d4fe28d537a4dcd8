/**
 * A sink is one upstream a punch must reach (the attendance API, the MQTT broker). The uploader
 * hands it a batch in recording order; the sink answers one outcome per item, in the same order,
 * or throws an `AgentError` when the whole batch could not be handed over (retryable ones are
 * retried with backoff; the items stay pending either way).
 *
 * Every sink passes the one contract suite in `test/unit/upload/sink.contract.ts`.
 */
import type { OutboxItem } from '../store/outbox.js';

export type ItemOutcome =
  | { outcome: 'delivered' }
  /** Refused for good: kept as a dead letter with the status and description until `queue retry`. */
  | { outcome: 'dead'; status: string; description: string }
  /** Not taken this time (system error upstream): tried again later with backoff. */
  | { outcome: 'retry'; status?: string; description: string };

export interface DeliverOptions {
  /** Fires when the uploader stops and releases the batch: give up promptly. */
  signal: AbortSignal;
}

export interface Sink {
  /** The name stored with each delivery: `api`, `mqtt`. */
  readonly name: string;
  /** Connects (where there is a connection to keep); never throws for an unreachable upstream. */
  start?(): Promise<void>;
  deliver(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]>;
  close(): Promise<void>;
}
