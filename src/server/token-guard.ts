/**
 * What stands between `POST /oauth/token` and scrypt: the token endpoint is the one place where a
 * client with no credentials makes the service do expensive work (one scrypt verification, about
 * 50 ms of a core and a thread of libuv's pool, which SQLite needs too). So:
 *
 * - **per client address** every attempt takes from a token bucket (`perAddress`: a burst, then a
 *   steady rate); an empty bucket is `429` with `Retry-After`. IPv6 clients are counted per /64,
 *   the block one host usually holds; IPv4-mapped addresses as IPv4.
 * - **per API key** every failed attempt takes from the key's bucket (`perKey`); while it is empty
 *   the key gets `429` whatever the secret, so guessing one key's secret from many addresses is
 *   as slow as from one. A right secret takes nothing: each attempt takes before its secret is
 *   verified and a right one gives it back, so attempts in parallel cannot pass the bucket.
 * - **scrypt in flight** is bounded (`maxVerifying`): an attempt finding every slot taken is
 *   answered `503` with `Retry-After` at once, never queued, so a burst of bad secrets cannot hold
 *   the thread pool and slow the other requests.
 * - **a refused client waits** (`refusalDelayMs`) before its `429`: a client that keeps trying
 *   gets its answers at that pace instead of as fast as it can open connections, so 64
 *   connections of bad secrets cost the service a few hundred answers a second, not thousands
 *   (each answer, and the new connection the `Connection: close` makes it open, is a turn of the
 *   event loop the other requests wait behind). Waiting is a timer: it costs nothing meanwhile.
 *
 * Buckets live in memory (a restart forgets them) and at most `maxTracked` of each are kept; the
 * least recently used goes first.
 */

import { Throttle } from '../core/throttle.js';
import { clientBucketOf } from '../core/client-address.js';

/** A token bucket's shape: `burst` attempts at once, refilled at `perMinute` (src/core/throttle.ts). */
export interface BucketRate {
  burst: number;
  perMinute: number;
}

export interface TokenGuardOptions {
  /** Token attempts per client address (IPv6: per /64). Default burst 30, 30 per minute. */
  perAddress?: BucketRate;
  /** Failed token attempts per API key. Default burst 10, 10 per minute. */
  perKey?: BucketRate;
  /** scrypt verifications at once; more are answered 503. Default 1 per 2 cores, at least 1. */
  maxVerifying?: number;
  /** Addresses and keys remembered, each. Default 10,000. */
  maxTracked?: number;
  /** How long a refused (429) attempt waits for its answer. Default 1 s (the shortest Retry-After). */
  refusalDelayMs?: number;
  now?: () => number;
}

export const DEFAULT_TOKEN_GUARD = {
  perAddress: { burst: 30, perMinute: 30 },
  perKey: { burst: 10, perMinute: 10 },
  maxTracked: 10_000,
  refusalDelayMs: 1000,
} as const;

/** The verdict on one attempt: go ahead (and call `done` with the outcome), or the status to answer now. */
export type Admission =
  | { ok: true; done(success: boolean): void }
  | { ok: false; status: 429 | 503; retryAfterSec: number; reason: 'address' | 'key' | 'busy' };

export class TokenGuard {
  readonly maxVerifying: number;
  /** How long a refused (429) attempt waits for its answer. */
  readonly refusalDelayMs: number;
  readonly #addresses: Throttle;
  readonly #keys: Throttle;
  #verifying = 0;
  /** Attempts refused, by reason (for diagnostics). */
  readonly refused = { address: 0, key: 0, busy: 0 };

  constructor(options: TokenGuardOptions = {}, cores = 2) {
    const now = options.now ?? Date.now;
    const max = options.maxTracked ?? DEFAULT_TOKEN_GUARD.maxTracked;
    this.#addresses = new Throttle({ rate: options.perAddress ?? DEFAULT_TOKEN_GUARD.perAddress, maxTracked: max, now });
    this.#keys = new Throttle({ rate: options.perKey ?? DEFAULT_TOKEN_GUARD.perKey, maxTracked: max, now });
    this.maxVerifying = Math.max(1, options.maxVerifying ?? Math.floor(cores / 2));
    this.refusalDelayMs = Math.max(0, options.refusalDelayMs ?? DEFAULT_TOKEN_GUARD.refusalDelayMs);
  }

  /** Decides on one token attempt from `address` for `apiKey`, before any secret is verified. */
  admit(address: string | undefined, apiKey: string): Admission {
    const byAddress = this.#addresses.take(clientBucketOf(address));
    if (!byAddress.ok) {
      this.refused.address++;
      return { ok: false, status: 429, retryAfterSec: byAddress.retryAfterSec, reason: 'address' };
    }
    // Taken now as if the secret were wrong, given back when it is right: attempts on one key in
    // parallel each count before any of them is verified.
    const byKey = this.#keys.take(apiKey);
    if (!byKey.ok) {
      this.refused.key++;
      return { ok: false, status: 429, retryAfterSec: byKey.retryAfterSec, reason: 'key' };
    }
    if (this.#verifying >= this.maxVerifying) {
      byKey.refund();
      this.refused.busy++;
      return { ok: false, status: 503, retryAfterSec: 1, reason: 'busy' };
    }
    this.#verifying++;
    let released = false;
    return {
      ok: true,
      done: (success) => {
        if (released) return;
        released = true;
        this.#verifying--;
        if (success) byKey.refund();
      },
    };
  }

  /** Verifications running now. */
  get verifying(): number {
    return this.#verifying;
  }

  /** Addresses and keys remembered. */
  get tracked(): { addresses: number; keys: number } {
    return { addresses: this.#addresses.size, keys: this.#keys.size };
  }
}
