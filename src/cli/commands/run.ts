import type { Command } from '../command.js';
import { parseCommandArgs } from '../args.js';
import { configureLogging, setLogLevel } from '../../core/logger.js';
import { COMMON_FLAGS } from '../../agent/config.js';
import { daemonComponents } from '../../agent/components.js';
import { Daemon } from '../../agent/daemon.js';
import { configForFlags, secretsFor } from '../../agent/runtime.js';

const usage = `usage: edge-agent run [--config FILE] [options]
  Runs the agent: scanners (if any are configured), the punch policy, and the uploader that
  drains the outbox to the attendance API and/or MQTT. With no scanner configured it still
  delivers what is in the outbox. SIGTERM or SIGINT finishes (or releases) in-flight batches and
  exits 0; nothing recorded is ever lost, even on SIGKILL.

  --config FILE           config file (YAML or JSON); default $EDGE_AGENT_CONFIG
  --data DIR              data folder (database agent.db, secrets.yaml)
  --terminal ID           terminal id          --site S          site name
  --mode in|out|toggle    terminal mode
  --api URL               attendance service base URL
  --client-id ID          OAuth2 client id     --path-form api|attendance
  --api-key K             API key              --api-secret-file FILE   file holding the API secret
  --mqtt URL              MQTT broker URL
  --upstream LIST         api, mqtt or api,mqtt (default: from --api/--mqtt, else the config)

  Secrets come from <data>/secrets.yaml (mode 0600; $EDGE_AGENT_SECRETS overrides the path)
  and systemd credentials.`;

const command: Command = {
  summary: 'run the agent (scanners, punch policy, uploader)',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { ...COMMON_FLAGS }, usage, false);
    const config = configForFlags(values);
    configureLogging({
      destination: 'stdout',
      format: config.logging.format,
      ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: config.logging.level }),
    });
    for (const [pattern, level] of Object.entries(config.logging.modules)) setLogLevel(pattern, level);
    const secrets = secretsFor(config, values);
    const daemon = new Daemon({ config, secrets });
    for (const component of await daemonComponents(config)) daemon.use(component);
    await daemon.start();
    process.stderr.write(`edge-agent running: terminal ${config.terminal.id}, upstream ${config.upstream.join('+')}, data ${config.dataDir}\n`);
    return new Promise<number>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        process.stderr.write(`${signal}: finishing in-flight deliveries and stopping\n`);
        // A kept-alive connection must not hold the process once everything is stopped.
        const exitSoon = (code: number) => setTimeout(() => process.exit(code), 1500).unref();
        daemon.stop().then(
          () => {
            exitSoon(0);
            resolve(0);
          },
          (err: unknown) => {
            process.stderr.write(`error while stopping: ${(err as Error).message}\n`);
            resolve(1);
          },
        );
      };
      const onSignal = (signal: NodeJS.Signals) => stop(signal);
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
  },
};
export default command;
