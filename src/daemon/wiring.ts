/**
 * Which components the daemon runs, in start order. The time authority, retention and the
 * uploader are built into the daemon (daemon.ts) and start before all of these, the authority
 * first: nothing reads or writes a punch before the clock has been judged. Around them:
 *
 *   clock        links info and metrics to the time authority (trusted, steps, corrections)
 *   biometrics   template cache (encrypted), identifier (1:N indexes), extractor, module slot map
 *   scanners     one worker per scanner: capture → identify → punch → feedback
 *   site-sync    enrolled templates shared with every terminal of the site over MQTT
 *   ops          retained state/info/metrics and the request/response commands
 *   control      the local control socket (enroll and identify from the CLI)
 *   sd-notify    last, so READY=1 means everything above has started
 *
 * The terminal's components share one TerminalRuntime (runtime.ts); each reads what the ones
 * before it left, so this order is the dependency order.
 */
import type { AgentConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { BiometricsComponent } from './components/biometrics.js';
import { ClockLink } from './components/clock.js';
import { ControlComponent } from './components/control.js';
import { OpsComponent, type OpsHooks } from './components/ops.js';
import { ScannersComponent } from './components/scanners.js';
import { SiteSyncComponent } from './components/site-sync.js';
import type { DaemonComponent } from './daemon.js';
import { TerminalRuntime } from './runtime.js';
import { SystemdNotifier } from './sd-notify.js';

export type { OpsHooks } from './components/ops.js';

export interface TerminalComponentOptions {
  ops?: boolean;
  control?: boolean;
  siteSync?: boolean;
  hooks?: OpsHooks;
}

/** The terminal's own components around one runtime (also what enroll/identify start without a daemon). */
export function terminalComponents(
  config: AgentConfig,
  secrets: Secrets,
  options: TerminalComponentOptions = {},
): { runtime: TerminalRuntime; components: DaemonComponent[] } {
  const runtime = new TerminalRuntime(config, secrets);
  const components: DaemonComponent[] = [new BiometricsComponent(runtime), new ScannersComponent(runtime)];
  if (options.siteSync !== false) components.push(new SiteSyncComponent(runtime));
  if (options.ops !== false) {
    components.push(
      new OpsComponent(
        runtime,
        options.hooks ?? {
          reloadConfig: async () => ({ reloaded: false, reason: 'this process cannot reload its configuration' }),
          restart: () => process.kill(process.pid, 'SIGTERM'),
        },
      ),
    );
  }
  if (options.control !== false) components.push(new ControlComponent(runtime));
  return { runtime, components };
}

/** Everything `edge-agent run` plugs into the daemon. */
export function daemonComponents(
  config: AgentConfig,
  secrets: Secrets,
  hooks?: OpsHooks,
): { components: DaemonComponent[]; runtime: TerminalRuntime } {
  const { runtime, components: terminal } = terminalComponents(config, secrets, hooks ? { hooks } : {});
  const components: DaemonComponent[] = [new ClockLink(runtime), ...terminal, new SystemdNotifier()];
  return { components, runtime };
}
