/**
 * Which components the daemon runs, in start order; it stops them in reverse (daemon.ts). This
 * is the one list: the order is the dependency order, each component reads what the ones before
 * it provided (the context, component.ts; the terminal's runtime, runtime.ts).
 *
 * Recording, what every daemon runs, even with no scanner (`recordingComponents`):
 *   outbox          the database and the outbox; retention; the database is closed last of all
 *   time-authority  judges the clock before anything reads or writes a punch; stopped last but the database
 *   uploader        drains the outbox; stopped after every component that punches, so in-flight batches finish
 *   punch-policy    direction, dedupe, the credential rule, the clock state of each punch
 *
 * The terminal (`terminalComponents`, also what enroll/identify start without a daemon):
 *   biometrics   template cache (encrypted), identifier (1:N indexes), extractor, module slot map
 *   scanners     one worker per scanner: capture → recognizer → punch step → feedback
 *   site-sync    enrolled templates shared with every terminal of the site over MQTT
 *   ops          retained state/info/metrics (republished at once on a clock step or a change of trust) and the request/response commands
 *   control      the local control socket (enroll and identify from the CLI)
 *
 * And last for `edge-agent run` (`daemonComponents`): systemd (sd-notify.ts), so READY=1 means
 * everything above has started.
 */
import type { AgentConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import type { DaemonComponent } from './component.js';
import { BiometricsComponent } from './components/biometrics.js';
import { ControlComponent } from './components/control.js';
import { OpsComponent, type OpsHooks } from './components/ops.js';
import { OutboxComponent } from './components/outbox.js';
import { PunchPolicyComponent } from './components/punch-policy.js';
import { ScannersComponent } from './components/scanners.js';
import { SiteSyncComponent } from './components/site-sync.js';
import { TimeAuthorityComponent, type TimeAuthorityOverrides } from './components/time-authority.js';
import { UploaderComponent, type UploaderComponentOptions } from './components/uploader.js';
import { TerminalRuntime } from './runtime.js';
import { SystemdNotifier } from './sd-notify.js';

export type { OpsHooks } from './components/ops.js';

export interface RecordingOptions extends UploaderComponentOptions {
  /**
   * False for a short-lived process beside the real daemon's job (enroll, identify without a
   * running daemon): the uploader is not started, so nothing about delivery is touched and no
   * upstream has to be configured. Punches recorded meanwhile wait for the daemon.
   */
  deliver?: boolean;
  /** Overrides for the time authority (tests: sources, clocks, boot id, tick). */
  clock?: TimeAuthorityOverrides;
}

/** The outbox, the time authority, the uploader and the punch policy: what records and delivers punches. */
export function recordingComponents(options: RecordingOptions = {}): DaemonComponent[] {
  const { clock, ...uploader } = options;
  return [new OutboxComponent(), new TimeAuthorityComponent(clock), new UploaderComponent(uploader), new PunchPolicyComponent()];
}

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

/** Everything `edge-agent run` plugs into the daemon after its recording components. */
export function daemonComponents(
  config: AgentConfig,
  secrets: Secrets,
  hooks?: OpsHooks,
): { components: DaemonComponent[]; runtime: TerminalRuntime } {
  const { runtime, components: terminal } = terminalComponents(config, secrets, hooks ? { hooks } : {});
  const components: DaemonComponent[] = [...terminal, new SystemdNotifier()];
  return { components, runtime };
}
