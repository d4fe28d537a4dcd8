/**
 * The components `edge-agent run` plugs into the daemon, in start order. The uploader and
 * retention are built into the daemon; the clock comes first (punches need its state), then the
 * terminal's own parts (biometrics, scanners, site sync, ops, control socket: see
 * terminal-components.ts), and the systemd notifier last, so READY=1 means everything started.
 */
import { ClockMonitor } from './clock.js';
import type { AgentConfig } from '../config/config.js';
import type { DaemonComponent, DaemonContext } from './daemon.js';
import type { Secrets } from '../config/secrets.js';
import { SystemdNotifier } from './sd-notify.js';
import type { OpsHooks } from './terminal-components.js';
import type { TerminalRuntime } from './terminal-runtime.js';
import { terminalComponents } from './terminal-setup.js';

/** Makes the punch policy mark punches with the clock monitor's state. */
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

export async function daemonComponents(config: AgentConfig, secrets: Secrets, hooks?: OpsHooks): Promise<{ components: DaemonComponent[]; runtime: TerminalRuntime }> {
  const clock = new ClockMonitor();
  const { runtime, components: terminal } = await terminalComponents(config, secrets, hooks ? { hooks } : {});
  runtime.clock = { isSynchronized: () => clock.isSynchronized(), metrics: () => ({ ...clock.metrics() }) };
  const components: DaemonComponent[] = [
    clock, // clock state; corrects pre-sync punches on sync
    new ClockPolicyLink(clock),
    ...terminal,
    new SystemdNotifier(), // last: READY=1 once everything above has started
  ];
  return { components, runtime };
}
