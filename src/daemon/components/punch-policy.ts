/**
 * The punch policy component: the terminal's rules for a punch (direction, dedupe, the credential
 * rule, the clock state stamped by the time authority), recording into the outbox. The scanners,
 * the control socket and the CLI's `punch` all punch through it.
 *
 * Tested in test/unit/daemon/daemon.test.ts (punches marked with the time authority's judgement;
 * recorded while a component stops).
 */
import { PunchPolicy } from '../../terminal/punch-policy.js';
import type { DaemonComponent, DaemonContext } from '../component.js';

export class PunchPolicyComponent implements DaemonComponent {
  readonly name = 'punch-policy';

  async start(ctx: DaemonContext): Promise<void> {
    ctx.provide('policy', PunchPolicy.fromConfig(ctx.config, ctx.outbox, ctx.time));
  }

  async stop(): Promise<void> {}
}
