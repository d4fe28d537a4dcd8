import type { Command } from '../command.js';
import { parseCommandArgs } from '../args.js';
import { configureLogging, setLogLevel } from '../../core/logger.js';
import { describeError, toAgentError } from '../../core/errors.js';
import { COMMON_FLAGS, type AgentConfig } from '../../config/config.js';
import { daemonComponents } from '../../daemon/components.js';
import { Daemon } from '../../daemon/daemon.js';
import { configForFlags, secretsFor } from '../../daemon/runtime.js';
import type { Secrets } from '../../config/secrets.js';
import type { TerminalRuntime } from '../../daemon/terminal-runtime.js';
import { applyScannerFlags, SCANNER_FLAGS } from '../terminal-session.js';

const usage = `usage: edge-agent run [--config FILE] [options]
  Runs the agent: scanners (if any are configured), the punch policy, and the uploader that
  drains the outbox to the attendance API and/or MQTT. With no scanner configured it still
  delivers what is in the outbox. SIGTERM or SIGINT finishes (or releases) in-flight batches and
  exits 0; nothing recorded is ever lost, even on SIGKILL.

  --embedded              the embedded default (what npm start runs): simulated scanners, the
                          attendance service and an MQTT broker on loopback, synthetic
                          employees who punch now and then
  --config FILE           config file (YAML or JSON); default $EDGE_AGENT_CONFIG
  --data DIR              data folder (database agent.db, secrets.yaml)
  --terminal ID           terminal id          --site S          site name
  --mode in|out|toggle    terminal mode
  --api URL               attendance service base URL
  --client-id ID          OAuth2 client id     --path-form api|attendance
  --api-key K             API key              --api-secret-file FILE   file holding the API secret
  --mqtt URL              MQTT broker URL
  --upstream LIST         api, mqtt or api,mqtt (default: from --api/--mqtt, else the config)
  --scanner FAMILY:PATH[:BAUD]   a scanner (repeatable): r30x, gt521 or iris-hid; PATH "sim" for a simulator
  --simulate              simulated scanners (an R30x module and an iris camera) when none is given
  --secrets FILE          the secrets file (mode 0600) instead of the one the config names
  --log-level LEVEL       fatal, error, warn, info, debug, trace or silent
  --log-format json|pretty   JSON lines for journald (default) or readable lines for a technician

  Secrets come from the secrets file the config names (default <data>/secrets.yaml, mode 0600;
  $EDGE_AGENT_SECRETS overrides the path) and systemd credentials.
  The daemon listens on <data>/control.sock (mode 0600) for "edge-agent enroll" and "identify".`;

type Values = Record<string, string | boolean | string[] | undefined>;

interface Session {
  config: AgentConfig & { source: string | null };
  secrets: Secrets;
  /** Called once the daemon has started (the embedded default enrols and starts visitors). */
  afterStart?: (rt: TerminalRuntime, daemon: Daemon) => Promise<void>;
  close?: () => Promise<void>;
}

async function normalSession(values: Values): Promise<Session> {
  const config = applyScannerFlags(configForFlags(values as never), values as never);
  return { config, secrets: secretsFor(config, values as never) };
}

async function embeddedSession(values: Values): Promise<Session> {
  const { startEmbeddedParts, startDemoFloor } = await import('../../embedded/embedded.js');
  const { createAttendanceClient } = await import('../../daemon/upstreams.js');
  const parts = await startEmbeddedParts(typeof values.data === 'string' ? values.data : 'data');
  for (const line of parts.banner) process.stdout.write(`${line}\n`);
  let stopVisitors: (() => Promise<void>) | null = null;
  return {
    config: parts.config,
    secrets: parts.secrets,
    afterStart: async (rt, daemon) => {
      const say = (line: string) => process.stdout.write(`${new Date().toTimeString().slice(0, 8)}  ${line}\n`);
      const names = new Map<string, string>();
      const { DEMO_EMPLOYEES } = await import('../../embedded/embedded.js');
      for (const e of DEMO_EMPLOYEES) names.set(e.employeeCode, `${e.firstName} ${e.lastName}`);
      for (const w of rt.workers.values()) {
        w.on('capture', (o) => {
          const who = o.employeeCode ? `${o.employeeCode} (${names.get(o.employeeCode) ?? '?'})` : 'someone unknown';
          if (o.result === 'punched') say(`punch: ${who} checked ${o.direction ?? '?'} by ${o.scanner.includes('iris') ? 'iris' : 'finger'} [${o.path} match, ${o.scanner.includes('iris') ? `distance ${(o.score ?? 0).toFixed(2)}` : `score ${Math.round(o.score ?? 0)}`}] durable in ${Math.round(o.latencyMs)} ms`);
          else if (o.result === 'duplicate') say(`punch: ${who} again within the dedupe window: nothing recorded`);
          else say(`capture: ${o.result}${o.detail ? ` (${o.detail})` : ''}`);
        });
      }
      daemon.context?.uploader.on('delivered', (d) => say(`delivered: ${d.count} punch(es) to ${d.sink}`));
      say('enrolling the synthetic employees through the simulated scanners (first start only); those enrolled start punching now and then');
      stopVisitors = startDemoFloor(rt, createAttendanceClient(parts.config, parts.secrets), say);
    },
    close: async () => {
      await stopVisitors?.();
      await parts.close();
    },
  };
}

const command: Command = {
  summary: 'run the agent (scanners, punch policy, uploader, ops)',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { ...COMMON_FLAGS, ...SCANNER_FLAGS, embedded: { type: 'boolean' } }, usage, false);
    // Only on request: a terminal that lost its config must say so, not start a demo.
    const embedded = values.embedded === true;
    let stopRequested: NodeJS.Signals | null = null;
    let wake: (() => void) | null = null;
    let restartRequested = false;
    const onSignal = (signal: NodeJS.Signals) => {
      stopRequested = signal;
      wake?.();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let exitCode = 0;
    if (embedded) configureLogging({ destination: 'stdout', format: process.env.EDGE_AGENT_LOG_FORMAT === 'json' ? 'json' : 'pretty', ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: 'warn' }) });
    const session = embedded ? await embeddedSession(values) : await normalSession(values);
    try {
      for (;;) {
        const { config, secrets } = session;
        configureLogging({
          destination: 'stdout',
          format: embedded && !process.env.EDGE_AGENT_LOG_FORMAT ? 'pretty' : config.logging.format,
          ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: embedded ? 'warn' : config.logging.level }),
        });
        for (const [pattern, level] of Object.entries(config.logging.modules)) setLogLevel(pattern, level);
        restartRequested = false;
        const hooks = {
          restart: () => {
            restartRequested = true;
            wake?.();
          },
          reloadConfig: async () => {
            const fresh = await normalSession(values);
            const changed = Object.keys(fresh.config).filter((k) => JSON.stringify((fresh.config as Record<string, unknown>)[k]) !== JSON.stringify((session.config as Record<string, unknown>)[k]));
            for (const [pattern, level] of Object.entries(fresh.config.logging.modules)) setLogLevel(pattern, level);
            const live = changed.filter((k) => k === 'logging');
            const needsRestart = changed.filter((k) => k !== 'logging' && k !== 'source');
            if (!embedded) {
              session.config = fresh.config;
              session.secrets = fresh.secrets;
            }
            return { changed, appliedLive: live, needsRestart, hint: needsRestart.length ? 'send the restart command to apply the rest' : null };
          },
        };
        const { components, runtime } = await daemonComponents(config, secrets, hooks);
        const daemon = new Daemon({ config, secrets });
        for (const component of components) daemon.use(component);
        await daemon.start();
        process.stderr.write(`edge-agent running: terminal ${config.terminal.id}, upstream ${config.upstream.join('+')}, scanners ${[...runtime.workers.keys()].join(', ') || 'none'}, data ${config.dataDir}\n`);
        if (session.afterStart && !restartRequested) {
          await session.afterStart(runtime, daemon).catch((err: unknown) => process.stderr.write(`embedded set-up: ${describeError(err)}\n`));
          session.afterStart = undefined;
        }
        if (!stopRequested && !restartRequested) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        process.stderr.write(restartRequested && !stopRequested ? 'restart requested: stopping and starting again\n' : `${stopRequested}: finishing in-flight deliveries and stopping\n`);
        try {
          await daemon.stop();
        } catch (err) {
          process.stderr.write(`error while stopping: ${toAgentError(err).message}\n`);
          exitCode = 1;
        }
        if (stopRequested || !restartRequested) break;
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await session.close?.();
    }
    // A kept-alive connection must not hold the process once everything is stopped.
    setTimeout(() => process.exit(exitCode), 1500).unref();
    return exitCode;
  },
};
export default command;
