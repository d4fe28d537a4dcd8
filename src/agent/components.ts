/**
 * The components `edge-agent run` plugs into the daemon, in start order. The uploader and
 * retention are built into the daemon; scanners, clock, ops and sd-notify add themselves here
 * (one line each), so `run.ts` stays a thin entry point.
 */
import type { AgentConfig } from './config.js';
import type { DaemonComponent } from './daemon.js';

export async function daemonComponents(_config: AgentConfig): Promise<DaemonComponent[]> {
  const components: DaemonComponent[] = [];
  return components;
}
