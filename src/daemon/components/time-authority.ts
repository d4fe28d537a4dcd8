/**
 * The time authority component: judges the clock before anything reads or writes a punch (its
 * first judgement corrects what it can before the uploader claims a batch), then keeps watching
 * (steps, trust); the uploader and the punch policy ask it from then on. Stopped last but the
 * database, so the latest trusted time is written after the last punch.
 */
import { TimeAuthority, type TimeAuthorityOptions } from '../../terminal/time-authority.js';
import type { DaemonComponent, DaemonContext } from '../component.js';

/** Overrides for the time authority (tests: sources, clocks, boot id, tick). */
export type TimeAuthorityOverrides = Partial<Omit<TimeAuthorityOptions, 'db' | 'outbox'>>;

export class TimeAuthorityComponent implements DaemonComponent {
  readonly name = 'time-authority';
  readonly #overrides: TimeAuthorityOverrides | undefined;
  #time: TimeAuthority | null = null;

  constructor(overrides?: TimeAuthorityOverrides) {
    this.#overrides = overrides;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const time = TimeAuthority.fromConfig(ctx.config, ctx.db, ctx.outbox, this.#overrides);
    ctx.provide('time', time);
    await time.start();
    this.#time = time;
  }

  async stop(): Promise<void> {
    await this.#time?.stop();
    this.#time = null;
  }
}
