/**
 * Log lines an outsider can multiply (ops' refused commands, site sync's refused records): one
 * per message anyone sends. Each is worth a line while they are few; a flood of them (thousands a
 * second from one broker client) must not fill the journal or wear out a Pi's SD card. At most
 * `burst` lines are written per `windowMs`; past that they are counted, and the next line written
 * says how many were left out (`suppressed`). Counters in metrics keep the full totals.
 */
import type { Logger } from '../core/logger.js';
import { monotonicMs } from '../core/time.js';

export interface ThrottledLogOptions {
  /** Lines written per window at most (default 10). */
  burst?: number;
  /** The window (ms, default 10 s). */
  windowMs?: number;
  now?: () => number;
}

export type ThrottledLevel = 'info' | 'warn' | 'error';

export class ThrottledLog {
  readonly #log: Logger;
  readonly #burst: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  #windowStart = -Infinity;
  #written = 0;
  #suppressed = 0;

  constructor(log: Logger, options: ThrottledLogOptions = {}) {
    this.#log = log;
    this.#burst = options.burst ?? 10;
    this.#windowMs = options.windowMs ?? 10_000;
    this.#now = options.now ?? monotonicMs;
  }

  /** Lines left out since the last one written. */
  get suppressed(): number {
    return this.#suppressed;
  }

  /** Writes the line, or counts it when this window's lines are spent; true when written. */
  write(level: ThrottledLevel, fields: Record<string, unknown>, message: string): boolean {
    const now = this.#now();
    if (now - this.#windowStart >= this.#windowMs) {
      this.#windowStart = now;
      this.#written = 0;
    }
    if (this.#written >= this.#burst) {
      this.#suppressed++;
      return false;
    }
    this.#written++;
    const left = this.#suppressed;
    this.#suppressed = 0;
    if (left === 0) this.#log[level](fields, message);
    else
      this.#log[level](
        { ...fields, suppressed: left },
        `${message} (and ${left} more like it left out since the last line: more than ${this.#burst} in ${Math.round(this.#windowMs / 1000)} s)`,
      );
    return true;
  }

  warn(fields: Record<string, unknown>, message: string): boolean {
    return this.write('warn', fields, message);
  }

  error(fields: Record<string, unknown>, message: string): boolean {
    return this.write('error', fields, message);
  }
}
