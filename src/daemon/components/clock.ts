/** Links the punch policy to the clock monitor, so punches are marked with the clock's state. */
import type { ClockMonitor } from '../clock.js';
import type { DaemonComponent, DaemonContext } from '../daemon.js';

export class ClockPolicyLink implements DaemonComponent {
  readonly name = 'clock-policy';
  readonly #clock: ClockMonitor;
  constructor(clock: ClockMonitor) {
    this.#clock = clock;
  }
  async start(ctx: DaemonContext): Promise<void> {
    ctx.policy.setClockSource(() => this.#clock.isSynchronized());
  }
  async stop(): Promise<void> {}
}
