/**
 * A warning that comes back again and again while something stays away (a broker down: an error
 * at every reconnect, every 2 s, about 43,000 lines a day on an SD card). The first one is
 * logged; the next after a quiet period that doubles each time (1 min, 2, 4, ... up to 1 h), each
 * saying how many like it were left out since the last; when the thing works again, one line says
 * so with the count, and the next failure is logged at once again.
 */
import type { Logger } from './logger.js';

export interface RepeatedWarningOptions {
  /** Quiet period after the first warning (default 60 s); doubles up to `capMs` (default 1 h). */
  firstQuietMs?: number;
  capMs?: number;
  now?: () => number;
}

export class RepeatedWarning {
  readonly #log: Logger;
  readonly #first: number;
  readonly #cap: number;
  readonly #now: () => number;
  #failures = 0;
  #suppressed = 0;
  #nextAt = 0;
  #quiet: number;

  constructor(log: Logger, options: RepeatedWarningOptions = {}) {
    this.#log = log;
    this.#first = options.firstQuietMs ?? 60_000;
    this.#cap = options.capMs ?? 3_600_000;
    this.#now = options.now ?? Date.now;
    this.#quiet = this.#first;
  }

  /** Failures since the last recovery. */
  get failures(): number {
    return this.#failures;
  }

  /** One more failure: logged now, or counted to be reported with the next line. */
  warn(fields: Record<string, unknown>, message: string): void {
    this.#failures++;
    const now = this.#now();
    if (this.#failures > 1 && now < this.#nextAt) {
      this.#suppressed++;
      return;
    }
    const left = this.#suppressed;
    this.#suppressed = 0;
    const quiet = this.#failures === 1 ? this.#first : this.#quiet;
    if (this.#failures > 1) this.#quiet = Math.min(this.#quiet * 2, this.#cap);
    this.#nextAt = now + quiet;
    const note = `${left ? ` (${left} more like it left out since the last line; ${this.#failures} in all)` : ''}; next such warning in ${Math.round(quiet / 60_000)} min at the earliest`;
    this.#log.warn({ ...fields, failures: this.#failures, suppressed: left }, `${message}${note}`);
  }

  /** It works again: one info line when there were failures, and the next failure is logged at once. */
  ok(fields: Record<string, unknown>, message: string): void {
    if (this.#failures > 0) this.#log.info({ ...fields, failures: this.#failures }, `${message} after ${this.#failures} failure(s)`);
    this.#failures = 0;
    this.#suppressed = 0;
    this.#nextAt = 0;
    this.#quiet = this.#first;
  }
}
