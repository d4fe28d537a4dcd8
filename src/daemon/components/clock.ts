/**
 * Links the terminal's runtime (info, metrics) to the daemon's time authority, which the daemon
 * itself starts before anything reads or writes punches (daemon.ts). A step or a change of trust
 * republishes the metrics at once, so operations see it without waiting for the next interval.
 */
import type { DaemonComponent, DaemonContext } from '../component.js';
import type { TerminalRuntime } from '../runtime.js';

export class ClockLink implements DaemonComponent {
  readonly name = 'clock';
  readonly #rt: TerminalRuntime;
  #off: (() => void) | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    rt.clock = ctx.time;
    const publish = () => void rt.ops?.publishMetrics();
    ctx.time.on('step', publish).on('change', publish);
    this.#off = () => ctx.time.off('step', publish).off('change', publish);
  }

  async stop(): Promise<void> {
    this.#off?.();
    this.#off = null;
  }
}
