/**
 * One error type for the whole agent. A code is `LAYER_WHAT` (for example `API_TIMEOUT`,
 * `DRIVER_CHECKSUM`, `STORE_OUTBOX_FULL`); device status codes keep the device's own number and
 * name in `context` (`{deviceCode: 0x09, deviceName: 'NOT_FOUND'}`).
 *
 * Every error says what happened (`message`) and what to do about it (`hint`), and whether doing
 * the same thing again later can succeed (`retryable`).
 */
import { errorCodeInfo, type ErrorCode } from './error-codes.js';

export { ERROR_CODES, isErrorCode, type ErrorCode } from './error-codes.js';

export interface AgentErrorOptions {
  /** What the user or operator should do about it (default: the code's hint in the table). */
  hint?: string;
  /** True when the same operation may succeed if tried again later (default: the code's). */
  retryable?: boolean;
  cause?: unknown;
}

export class AgentError extends Error {
  override readonly name = 'AgentError';
  readonly code: ErrorCode;
  readonly context: Record<string, unknown>;
  readonly hint: string | undefined;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const info = errorCodeInfo(code);
    this.code = code;
    this.context = context;
    this.hint = options.hint ?? info.hint;
    this.retryable = options.retryable ?? info.retryable;
  }

  /** A plain object for logs and JSON output (no stack, no cause chain). */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint ? { hint: this.hint } : {}),
      retryable: this.retryable,
      context: this.context,
    };
  }
}

export function isAgentError(err: unknown, code?: ErrorCode): err is AgentError {
  return err instanceof AgentError && (code === undefined || err.code === code);
}

/** Wraps anything thrown into an AgentError, keeping an AgentError as it is. */
export function toAgentError(err: unknown, code: ErrorCode = 'INTERNAL', context: Record<string, unknown> = {}): AgentError {
  if (err instanceof AgentError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AgentError(code, message, context, { cause: err });
}

/** One line for a person: `CODE: message (hint)`. */
export function describeError(err: unknown): string {
  if (err instanceof AgentError) {
    return `${err.code}: ${err.message}${err.hint ? `\n  hint: ${err.hint}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}
