import type { Command } from '../command.js';
import { parseCommandArgs } from '../args.js';
import { configureLogging } from '../../core/logger.js';
import { COMMON_FLAGS } from '../../config/config.js';
import { configForFlags, secretsFor } from '../../config/load.js';
import { supervise, type Session } from '../../daemon/supervisor.js';
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

function configuredSession(values: Values): Session {
  const load = () => {
    const config = applyScannerFlags(configForFlags(values as never), values as never);
    return { config, secrets: secretsFor(config, values as never) };
  };
  return { ...load(), reload: async () => load() };
}

const command: Command = {
  summary: 'run the agent (scanners, punch policy, uploader, ops)',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { ...COMMON_FLAGS, ...SCANNER_FLAGS, embedded: { type: 'boolean' } }, usage, false);
    // Only on request: a terminal that lost its config must say so, not start a demo.
    const embedded = values.embedded === true;
    if (embedded) configureLogging({ destination: 'stdout', format: process.env.EDGE_AGENT_LOG_FORMAT === 'json' ? 'json' : 'pretty', ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: 'warn' }) });
    const exitCode = await supervise(async () => (embedded ? (await import('../../embedded/session.js')).embeddedSession(typeof values.data === 'string' ? values.data : 'data') : configuredSession(values)));
    // A kept-alive connection must not hold the process once everything is stopped.
    setTimeout(() => process.exit(exitCode), 1500).unref();
    return exitCode;
  },
};
export default command;
