/**
 * Tested in test/integration/agent-ops.test.ts, test/integration/embedded-default.test.ts,
 * test/integration/systemd-notify.test.ts and test/integration/crash.test.ts (edge-agent run as the
 * daemon).
 */
import type { Command } from 'commander';
import { action, defineCommand } from '../command.js';
import { withCommonOptions, withScannerOptions, type CommonValues, type ScannerValues } from '../common-options.js';
import type { Session } from '../../daemon/supervisor.js';

type Values = CommonValues & ScannerValues & { embedded?: boolean };

async function configuredSession(values: Values): Promise<Session> {
  const { configForFlags, secretsFor } = await import('../../config/load.js');
  const { applyScannerFlags } = await import('../terminal-session.js');
  const load = () => {
    const config = applyScannerFlags(configForFlags(values, process.env, { command: 'edge-agent run' }), values);
    return { config, secrets: secretsFor(config, values) };
  };
  return { ...load(), reload: async () => load() };
}

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'run',
    summary: 'run the agent (scanners, punch policy, uploader, ops)',
    audience: 'everyone',
    details: `Runs the agent: scanners (if any are configured), the punch policy, and the uploader that
drains the outbox to the attendance API and/or MQTT. With no scanner configured it still
delivers what is in the outbox. SIGTERM or SIGINT finishes (or releases) in-flight batches and
exits 0; nothing recorded is ever lost, even on SIGKILL.

Secrets come from the secrets file the config names (default <data>/secrets.yaml, mode 0600;
$EDGE_AGENT_SECRETS overrides the path) and systemd credentials.
The daemon listens on <data>/control.sock (mode 0600) for "edge-agent enroll" and "identify".`,
  }).option(
    '--embedded',
    'the embedded default (what npm start runs): simulated scanners, the attendance service and an MQTT broker on loopback, synthetic employees who punch now and then',
  );
  withScannerOptions(cmd);
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values) => {
    const { configureLogging } = await import('../../core/logger.js');
    const { supervise } = await import('../../daemon/supervisor.js');
    // Only on request: a terminal that lost its config must say so, not start a demo.
    const embedded = values.embedded === true;
    if (embedded)
      configureLogging({
        destination: 'stdout',
        format: process.env.EDGE_AGENT_LOG_FORMAT === 'json' ? 'json' : 'pretty',
        ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: 'warn' }),
      });
    const exitCode = await supervise(async () =>
      embedded ? (await import('../../embedded/session.js')).embeddedSession(values.data ?? 'data') : configuredSession(values),
    );
    // A kept-alive connection must not hold the process once everything is stopped.
    setTimeout(() => process.exit(exitCode), 1500).unref();
    return exitCode;
  });
}
