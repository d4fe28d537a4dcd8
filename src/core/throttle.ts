/**
 * How many attempts each key (a client address, an API key) may make, for the places where a
 * client with no credentials makes us do expensive work: the console's login and the service's
 * token endpoint. A rate is one of two shapes:
 *
 * - `{ burst, perMinute }`: a token bucket. `burst` attempts at once, then `perMinute` more each
 *   minute, refilled continuously (the service's token guard);
 * - `{ max, windowMs }`: at most `max` attempts in any `windowMs` (a sliding window: the console's
 *   "five failed logins a minute").
 *
 * An attempt is counted when it is taken (`take`), synchronously, before the caller awaits
 * anything (a scrypt check): attempts made in parallel each count, none overwrites another's. An
 * attempt that turns out not to count (a right password) is given back (`Ticket.refund`), or the
 * key forgotten (`clear`). Several throttles (per address, per key, global) compose by taking from
 * each in turn and refunding what was taken when a later one refuses.
 *
 * Keys live in memory (a restart forgets them) and at most `maxTracked` are kept; the least
 * recently used goes first.
 */

export type ThrottleRate = { burst: number; perMinute: number } | { max: number; windowMs: number };

export interface ThrottleOptions {
  rate: ThrottleRate;
  /** Keys remembered. Default 10,000. */
  maxTracked?: number;
  now?: () => number;
}

/** An attempt taken (`refund` gives it back, once), or refused with the seconds to wait. */
export type Ticket = { ok: true; refund(): void } | { ok: false; retryAfterSec: number };

interface KeyState {
  /** Bucket: attempts left (fractional while refilling). */
  tokens: number;
  /** Bucket: when `tokens` was last brought up to date. */
  at: number;
  /** Window: when the attempts in the window were taken, oldest first. */
  times: number[];
}

export class Throttle {
  readonly #rate: ThrottleRate;
  readonly #max: number;
  readonly #now: () => number;
  readonly #keys = new Map<string, KeyState>();

  constructor(options: ThrottleOptions) {
    this.#rate = options.rate;
    this.#max = options.maxTracked ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Takes one attempt for `key` now, or says how long to wait (nothing is counted then). */
  take(key: string, now = this.#now()): Ticket {
    const state = this.#touch(key, now);
    const wait = this.#waitSec(state, now);
    if (wait > 0) return { ok: false, retryAfterSec: wait };
    if ('burst' in this.#rate) state.tokens -= 1;
    else state.times.push(now);
    let refunded = false;
    return {
      ok: true,
      refund: () => {
        if (refunded || this.#keys.get(key) !== state) return;
        refunded = true;
        if ('burst' in this.#rate) state.tokens = Math.min(this.#rate.burst, state.tokens + 1);
        else {
          const i = state.times.lastIndexOf(now);
          if (i >= 0) state.times.splice(i, 1);
        }
      },
    };
  }

  /** Seconds until `key` may make an attempt (0: now), without taking one. */
  wait(key: string, now = this.#now()): number {
    return this.#waitSec(this.#touch(key, now), now);
  }

  /** Forgets `key` (a success that wipes its count). */
  clear(key: string): void {
    this.#keys.delete(key);
  }

  /** Keys remembered. */
  get size(): number {
    return this.#keys.size;
  }

  /** The key's state brought up to `now`, marked most recently used. */
  #touch(key: string, now: number): KeyState {
    let state = this.#keys.get(key);
    if (state) this.#keys.delete(key);
    else state = { tokens: 'burst' in this.#rate ? this.#rate.burst : 0, at: now, times: [] };
    this.#keys.set(key, state);
    if (this.#keys.size > this.#max) this.#keys.delete(this.#keys.keys().next().value!);
    if ('burst' in this.#rate) {
      state.tokens = Math.min(this.#rate.burst, state.tokens + (now - state.at) * (this.#rate.perMinute / 60_000));
      state.at = now;
    } else {
      const { windowMs } = this.#rate;
      while (state.times.length > 0 && now - state.times[0]! >= windowMs) state.times.shift();
    }
    return state;
  }

  #waitSec(state: KeyState, now: number): number {
    if ('burst' in this.#rate) {
      if (state.tokens >= 1) return 0;
      const perMs = this.#rate.perMinute / 60_000;
      return Math.max(1, Math.ceil((1 - state.tokens) / perMs / 1000));
    }
    if (state.times.length < this.#rate.max) return 0;
    // The attempt whose leaving brings the count under max.
    const leaving = state.times[state.times.length - this.#rate.max]!;
    return Math.max(1, Math.ceil((leaving + this.#rate.windowMs - now) / 1000));
  }
}
