import { AgentError } from './errors.js';

/** Resolves after `ms`, or rejects with `CORE_ABORTED` when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AgentError('CORE_ABORTED', 'operation aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AgentError('CORE_ABORTED', 'operation aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Races `promise` against a timer. On timeout rejects with `makeError()` (default `CORE_TIMEOUT`)
 * and calls `onTimeout` so the caller can release what the promise holds.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  makeError: () => Error = () => new AgentError('CORE_TIMEOUT', `timed out after ${ms} ms`, { ms }, { retryable: true }),
  onTimeout?: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout?.();
      reject(makeError());
    }, ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Monotonic milliseconds (immune to wall-clock steps). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}
