/**
 * The components `edge-agent run` plugs into the daemon, in start order. The uploader and
 * retention are built into the daemon; scanners, clock, ops and sd-notify add themselves here
 * (one line each), so `run.ts` stays a thin entry point.
 */
import { ClockMonitor } from './clock.js';
import type { AgentConfig } from './config.js';
import type { DaemonComponent } from './daemon.js';
import { SystemdNotifier } from './sd-notify.js';

export async function daemonComponents(_config: AgentConfig): Promise<DaemonComponent[]> {
  const components: DaemonComponent[] = [];
  components.push(new ClockMonitor()); // clock state; corrects pre-sync punches on sync
  components.push(new SystemdNotifier()); // last: READY=1 once everything above has started
  return components;
}
