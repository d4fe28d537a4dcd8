/** Exponential backoff with full jitter: a delay drawn uniformly from [0, min(cap, base·2^attempt)]. */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  /** Source of randomness in [0, 1); injectable for tests. */
  random?: () => number;
}

export function backoffCeiling(attempt: number, { baseMs, capMs }: BackoffOptions): number {
  const exp = baseMs * 2 ** Math.max(0, Math.min(attempt, 52));
  return Math.min(capMs, exp);
}

/** `attempt` counts from 0 for the first retry. */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const random = options.random ?? Math.random;
  return Math.floor(random() * backoffCeiling(attempt, options));
}
