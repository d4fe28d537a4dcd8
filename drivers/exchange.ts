/**
 * The two pieces every driver's exchange engine shares: requests go out one at a time
 * (`OneAtATime`), and a request waits for its answer under a timer that is cleared however it
 * ends (`awaitAnswer`: answered, failed, or timed out — whichever comes first wins, once).
 *
 * Tested in test/unit/drivers/r30x/driver.test.ts (a second command waits for the first answer;
 * DRIVER_TIMEOUT after the retries) and test/unit/drivers/iris-hid/driver.test.ts, through the
 * drivers that use it.
 */

/** Runs tasks one after the other, in call order; a failed task does not stop the next. */
export class OneAtATime {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(task);
    this.#tail = run.catch(() => undefined);
    return run;
  }
}

/** A request waiting for its answer. */
export interface Answer<T> {
  readonly promise: Promise<T>;
  /** False once answered, failed or timed out. */
  readonly waiting: boolean;
  resolve(value: T): void;
  reject(err: Error): void;
}

/**
 * An answer that fails with `timedOut()` after `timeoutMs` unless it came (or failed) first.
 * `timedOut` runs only on a timeout: the place to drop the request from the caller's books.
 */
export function awaitAnswer<T>(timeoutMs: number, timedOut: () => Error): Answer<T> {
  let settle!: (ok: boolean, value: T | Error) => void;
  let waiting = true;
  const promise = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => settle(false, timedOut()), timeoutMs);
    settle = (ok, value) => {
      if (!waiting) return;
      waiting = false;
      clearTimeout(timer);
      if (ok) resolve(value as T);
      else reject(value as Error);
    };
  });
  return {
    promise,
    get waiting() {
      return waiting;
    },
    resolve: (value) => settle(true, value),
    reject: (err) => settle(false, err),
  };
}
