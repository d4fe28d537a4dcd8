/**
 * The `api` sink: operation 6 (add/update events) of the attendance service, a batch per request.
 *
 * Per item: `SUCCESS` → delivered; `USER_NOT_AVAILABLE` and `INVALID_PARAMETERS` → dead letter
 * with the status and description; `ERROR` (and any status this agent does not know) → retry.
 * Whole request: the client throws (`API_NETWORK`, `API_TIMEOUT`, `API_HTTP_5XX`,
 * `API_RATE_LIMITED`, `API_BAD_RESPONSE` retryable; auth and 4xx not) and the uploader backs off.
 * A top-level non-SUCCESS envelope without per-item results cannot say which item it means:
 * the batch is split in halves and each half sent again, down to single items, so one poison
 * item never holds back the others.
 *
 * A check-in goes as `{employeeCode, inTime, tzOffset, shift}`, a check-out as
 * `{employeeCode, outTime, inTime?, tzOffset, shift}` (inTime of the check-in it closes when
 * the terminal knew it). The event's identity on the service is employeeCode + inTime, so a
 * replay after a crash is an update, never a second event.
 */
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { AttendanceClient } from '../api/client.js';
import type { AttendanceEvent, Envelope } from '../api/types.js';
import type { OutboxItem } from '../store/outbox.js';
import type { DeliverOptions, ItemOutcome, Sink } from './sink.js';

const log = logger('upload:api');

export type EventsClient = Pick<AttendanceClient, 'addEvents'>;

export const DEAD_STATUSES = new Set(['USER_NOT_AVAILABLE', 'INVALID_PARAMETERS']);

/** The fields of a punch its attendance event is made of (an outbox item, or a punch read from MQTT). */
export type PunchFields = Pick<OutboxItem, 'employeeCode' | 'tzOffset' | 'direction' | 'localTime' | 'inTime' | 'shift'>;

export function toAttendanceEvent(item: PunchFields): AttendanceEvent {
  const e: AttendanceEvent = { employeeCode: item.employeeCode, tzOffset: item.tzOffset };
  if (item.direction === 'in') e.inTime = item.localTime;
  else {
    e.outTime = item.localTime;
    if (item.inTime) e.inTime = item.inTime;
  }
  if (item.shift) e.shift = item.shift;
  return e;
}

export function classify(status: string, description: string | undefined): ItemOutcome {
  if (status === 'SUCCESS') return { outcome: 'delivered' };
  const text = description ?? status;
  if (DEAD_STATUSES.has(status)) return { outcome: 'dead', status, description: text };
  return { outcome: 'retry', status, description: text };
}

/**
 * Operation 6 for a batch, one outcome per event in order (the rules at the top of this file);
 * the agent's outbox and the central MQTT ingest deliver through it.
 */
export async function deliverEvents(
  client: EventsClient,
  events: readonly AttendanceEvent[],
  signal?: AbortSignal,
): Promise<ItemOutcome[]> {
  if (events.length === 0) return [];
  const env: Envelope<Envelope<AttendanceEvent>[]> = await client.addEvents([...events], { signal });
  const results = env.returnValue;
  if (Array.isArray(results)) {
    if (results.length !== events.length) {
      throw new AgentError(
        'API_BAD_RESPONSE',
        `the service answered ${results.length} results for ${events.length} events`,
        { sent: events.length, answered: results.length },
        {
          hint: 'api.url may point at something that is not the attendance service; it is retried later',
          retryable: true,
        },
      );
    }
    return results.map((r) => classify(r.statusCode, r.statusDescription));
  }
  if (env.statusCode === 'SUCCESS') {
    throw new AgentError(
      'API_BAD_RESPONSE',
      'the service answered SUCCESS without per-event results',
      { sent: events.length },
      { hint: 'it is retried later', retryable: true },
    );
  }
  if (events.length === 1) return [classify(env.statusCode, env.statusDescription)];
  if (env.statusCode === 'ERROR') {
    // A system error for the whole request says nothing about any one item: retry them all.
    return events.map(() => ({ outcome: 'retry', status: 'ERROR', description: env.statusDescription ?? 'system error on the service' }));
  }
  log.debug({ statusCode: env.statusCode, size: events.length }, 'batch refused as a whole; splitting it to find the item');
  const mid = Math.ceil(events.length / 2);
  const left = await deliverEvents(client, events.slice(0, mid), signal);
  const right = await deliverEvents(client, events.slice(mid), signal);
  return [...left, ...right];
}

export class ApiSink implements Sink {
  readonly name = 'api';
  readonly #client: EventsClient;

  constructor(client: EventsClient) {
    this.#client = client;
  }

  deliver(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]> {
    return deliverEvents(this.#client, items.map(toAttendanceEvent), options.signal);
  }

  async close(): Promise<void> {
    /* connections belong to the global fetch dispatcher */
  }
}
