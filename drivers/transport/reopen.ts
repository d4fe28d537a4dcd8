/** Reopens a transport after a disconnect, waiting a full-jitter exponential backoff between tries. */
import { backoffDelay, type BackoffOptions } from '../../src/core/backoff.js';
import { AgentError } from '../../src/core/errors.js';
import { sleep } from '../../src/core/time.js';
import type { ByteTransport } from './transport.js';

export interface ReopenOptions extends Partial<BackoffOptions> {
  /** Give up after this many failed tries (default: never). */
  maxAttempts?: number;
  signal?: AbortSignal;
  /** Called after each failed try with the error and the delay before the next. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** Resolves once `transport.open()` succeeds; rejects with `CORE_ABORTED` or the last error. */
export async function reopenWithBackoff(transport: ByteTransport, options: ReopenOptions = {}): Promise<number> {
  const backoff: BackoffOptions = { baseMs: options.baseMs ?? 200, capMs: options.capMs ?? 10_000, ...(options.random ? { random: options.random } : {}) };
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw new AgentError('CORE_ABORTED', 'reconnect aborted');
    try {
      await transport.open();
      return attempt + 1;
    } catch (err) {
      if (options.maxAttempts !== undefined && attempt + 1 >= options.maxAttempts) throw err;
      const delay = backoffDelay(attempt, backoff);
      options.onRetry?.(err, attempt, delay);
      await sleep(delay, options.signal);
    }
  }
}
