/**
 * Envelopes and results of the service's handlers.
 *
 * Tested in test/integration/api-raw-http.test.ts (the exact status codes of section 7 in their
 * envelopes over plain HTTP) and test/integration/api-contract.test.ts.
 */
import type { Envelope } from '../api/types.js';

export interface HandlerResult {
  /** HTTP status of the answer. */
  status: number;
  body: Envelope<unknown>;
  headers?: Record<string, string>;
  /** For the request log: how many items the request carried. */
  items?: number;
}

export function ok(returnValue: unknown, statusDescription = 'success'): Envelope<unknown> {
  return { statusCode: 'SUCCESS', statusDescription, returnValue };
}

export function fail(statusCode: string, statusDescription: string): Envelope<unknown> {
  return { statusCode, statusDescription, returnValue: null };
}

/** A processed request: HTTP 200 with the envelope (any section-7 code). */
export function answer(body: Envelope<unknown>, extra: Partial<HandlerResult> = {}): HandlerResult {
  return { status: 200, body, ...extra };
}

/**
 * A request the service could not take as a request at all (not JSON, wrong JSON types, too
 * many items): HTTP 400 with `INVALID_PARAMETERS`. Thrown by handlers, answered by the router.
 */
export class BadRequest extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.status = status;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `1 row`, `2 rows`. */
export function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
