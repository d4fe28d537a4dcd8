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

export function toAttendanceEvent(item: OutboxItem): AttendanceEvent {
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

export class ApiSink implements Sink {
  readonly name = 'api';
  readonly #client: EventsClient;

  constructor(client: EventsClient) {
    this.#client = client;
  }

  async deliver(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]> {
    if (items.length === 0) return [];
    const env: Envelope<Envelope<AttendanceEvent>[]> = await this.#client.addEvents(items.map(toAttendanceEvent), { signal: options.signal });
    const results = env.returnValue;
    if (Array.isArray(results)) {
      if (results.length !== items.length) {
        throw new AgentError('API_BAD_RESPONSE', `the service answered ${results.length} results for ${items.length} events`, { sent: items.length, answered: results.length }, {
          hint: 'api.url may point at something that is not the attendance service; it is retried later',
          retryable: true,
        });
      }
      return results.map((r) => classify(r.statusCode, r.statusDescription));
    }
    if (env.statusCode === 'SUCCESS') {
      throw new AgentError('API_BAD_RESPONSE', 'the service answered SUCCESS without per-event results', { sent: items.length }, { hint: 'it is retried later', retryable: true });
    }
    if (items.length === 1) return [classify(env.statusCode, env.statusDescription)];
    if (env.statusCode === 'ERROR') {
      // A system error for the whole request says nothing about any one item: retry them all.
      return items.map(() => ({ outcome: 'retry', status: 'ERROR', description: env.statusDescription ?? 'system error on the service' }));
    }
    log.debug({ statusCode: env.statusCode, size: items.length }, 'batch refused as a whole; splitting it to find the item');
    const mid = Math.ceil(items.length / 2);
    const left = await this.deliver(items.slice(0, mid), options);
    const right = await this.deliver(items.slice(mid), options);
    return [...left, ...right];
  }

  async close(): Promise<void> {
    /* connections belong to the global fetch dispatcher */
  }
}
