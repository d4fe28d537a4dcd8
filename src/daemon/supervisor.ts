/**
 * The daemon's lifecycle around one session: signals (SIGINT/SIGTERM finish or release in-flight
 * batches, then exit 0), the `restart` ops command (stop and start again in this process), and
 * `reload-config` (log levels apply at once; anything else waits for a restart). `edge-agent run`
 * builds the session (a configured terminal, or the embedded demo) and hands it over here.
 *
 * Tested in test/integration/agent-ops.test.ts (SIGTERM: a clean stop, offline published) and
 * test/integration/systemd-notify.test.ts (edge-agent run under systemd).
 *
 * Not tested end to end: the in-process restart and reload-config (the ops commands' unit test
 * calls a stand-in for them).
 */
import { describeError, toAgentError } from '../core/errors.js';
import { configureLogging, setLogLevel } from '../core/logger.js';
import type { AgentConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { Daemon } from './daemon.js';
import type { TerminalRuntime } from './runtime.js';
import { daemonComponents } from './wiring.js';

export interface Session {
  config: AgentConfig & { source: string | null };
  secrets: Secrets;
  /** True for the embedded demo: readable logs on stdout, a configuration that is not reloaded. */
  embedded?: boolean;
  /** Reads the configuration and secrets again (the `reload-config` command). */
  reload(): Promise<{ config: AgentConfig & { source: string | null }; secrets: Secrets }>;
  /** Called once, after the first start (the embedded demo enrols and starts its visitors). */
  afterStart?: (rt: TerminalRuntime, daemon: Daemon) => Promise<void>;
  close?: () => Promise<void>;
}

function configureFor(session: Session): void {
  const { config, embedded } = session;
  configureLogging({
    destination: 'stdout',
    format: embedded && !process.env.EDGE_AGENT_LOG_FORMAT ? 'pretty' : config.logging.format,
    ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: embedded ? 'warn' : config.logging.level }),
  });
  for (const [pattern, level] of Object.entries(config.logging.modules)) setLogLevel(pattern, level);
}

/**
 * Runs the daemon until a signal; resolves to the process exit code. The session is opened after
 * the signal handlers are in place, so a Ctrl-C during a slow start stops cleanly once started.
 */
export async function supervise(
  open: () => Promise<Session>,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  let stopRequested: NodeJS.Signals | null = null;
  let restartRequested = false;
  let wake: (() => void) | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    stopRequested = signal;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let exitCode = 0;
  let session: Session | null = null;
  try {
    session = await open();
    for (;;) {
      const { config, secrets } = session;
      configureFor(session);
      restartRequested = false;
      const hooks = {
        restart: () => {
          restartRequested = true;
          wake?.();
        },
        reloadConfig: async () => {
          const fresh = await session!.reload();
          const changed = Object.keys(fresh.config).filter(
            (k) =>
              JSON.stringify((fresh.config as Record<string, unknown>)[k]) !==
              JSON.stringify((session!.config as Record<string, unknown>)[k]),
          );
          for (const [pattern, level] of Object.entries(fresh.config.logging.modules)) setLogLevel(pattern, level);
          const live = changed.filter((k) => k === 'logging');
          const needsRestart = changed.filter((k) => k !== 'logging' && k !== 'source');
          if (!session!.embedded) {
            session!.config = fresh.config;
            session!.secrets = fresh.secrets;
          }
          return {
            changed,
            appliedLive: live,
            needsRestart,
            hint: needsRestart.length ? 'send the restart command to apply the rest' : null,
          };
        },
      };
      const { components, runtime } = daemonComponents(config, secrets, hooks);
      const daemon = new Daemon({ config, secrets });
      for (const component of components) daemon.use(component);
      await daemon.start();
      say(
        `edge-agent running: terminal ${config.terminal.id}, upstream ${config.upstream.join('+')}, scanners ${[...runtime.workers.keys()].join(', ') || 'none'}, data ${config.dataDir}`,
      );
      if (session.afterStart && !restartRequested) {
        await session.afterStart(runtime, daemon).catch((err: unknown) => say(`embedded set-up: ${describeError(err)}`));
        session.afterStart = undefined;
      }
      if (!stopRequested && !restartRequested) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      say(
        restartRequested && !stopRequested
          ? 'restart requested: stopping and starting again'
          : `${stopRequested}: finishing in-flight deliveries and stopping`,
      );
      try {
        await daemon.stop();
      } catch (err) {
        say(`error while stopping: ${toAgentError(err).message}`);
        exitCode = 1;
      }
      if (stopRequested || !restartRequested) break;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await session?.close?.();
  }
  return exitCode;
}
