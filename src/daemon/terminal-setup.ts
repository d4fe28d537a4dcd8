/**
 * Builds the agent's own components around one TerminalRuntime (see terminal-components.ts).
 * `components.ts` puts them between the clock monitor and the systemd notifier.
 */
import type { AgentConfig } from '../config/config.js';
import type { DaemonComponent } from './daemon.js';
import { createExtractor, createFingerMatcher } from './biometric-engines.js';
import type { Secrets } from '../config/secrets.js';
import { BiometricsComponent, ControlComponent, OpsComponent, ScannersComponent, SiteSyncComponent, type OpsHooks } from './terminal-components.js';
import { TerminalRuntime } from './terminal-runtime.js';

export interface TerminalSetupOptions {
  ops?: boolean;
  control?: boolean;
  siteSync?: boolean;
  hooks?: OpsHooks;
}

export async function terminalComponents(config: AgentConfig, secrets: Secrets, options: TerminalSetupOptions = {}): Promise<{ runtime: TerminalRuntime; components: DaemonComponent[] }> {
  const runtime = new TerminalRuntime(config, secrets);
  const components: DaemonComponent[] = [
    new BiometricsComponent(runtime, { createExtractor, fingerMatcher: createFingerMatcher }),
    new ScannersComponent(runtime),
  ];
  if (options.siteSync !== false) components.push(new SiteSyncComponent(runtime));
  if (options.ops !== false) {
    components.push(
      new OpsComponent(runtime, options.hooks ?? {
        reloadConfig: async () => ({ reloaded: false, reason: 'this process cannot reload its configuration' }),
        restart: () => process.kill(process.pid, 'SIGTERM'),
      }),
    );
  }
  if (options.control !== false) components.push(new ControlComponent(runtime));
  return { runtime, components };
}
