/**
 * Reopens a transport after a disconnect, waiting a full-jitter exponential backoff between tries.
 *
 * Tested in test/unit/drivers/transport/serial-transport.test.ts (reopening with backoff) and
 * test/unit/drivers/iris-hid/scanner.test.ts (reopen after an unplug).
 */
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
  const backoff: BackoffOptions = {
    baseMs: options.baseMs ?? 200,
    capMs: options.capMs ?? 10_000,
    ...(options.random ? { random: options.random } : {}),
  };
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

export interface ReconnectLoopOptions extends ReopenOptions {
  /** Runs once the transport is open again: reset the link state and redo the handshake. */
  handshake: () => Promise<void>;
  /** True once the owner was closed on purpose (the loop then stops quietly). */
  closed: () => boolean;
  /** Called when the device answers again. */
  onReconnected: () => void;
  /** Called after a failed handshake, before the next try. */
  onFailedTry?: (err: unknown) => void;
  /** Pause after a failed handshake (default 0: the backoff of the next reopen paces it). */
  pauseMs?: number;
}

/**
 * A scanner's reconnection after a disconnect, in the background: reopen with backoff, then the
 * handshake; a failed handshake closes the transport and starts over. Returns the controller
 * that stops it (close() aborts it).
 */
export function startReconnectLoop(transport: ByteTransport, options: ReconnectLoopOptions): AbortController {
  const ac = new AbortController();
  const { handshake, closed, onReconnected, onFailedTry, pauseMs, ...reopen } = options;
  void (async () => {
    for (;;) {
      try {
        await reopenWithBackoff(transport, { ...reopen, signal: ac.signal });
        await handshake();
        if (!closed()) onReconnected();
        return;
      } catch (e) {
        if (ac.signal.aborted || closed() || (e instanceof AgentError && e.code === 'CORE_ABORTED')) return;
        onFailedTry?.(e);
        await transport.close().catch(() => undefined);
        if (pauseMs) await sleep(pauseMs, ac.signal).catch(() => undefined);
      }
    }
  })();
  return ac;
}
