import type { Command } from 'commander';
import { action, defineCommand, printJson, withJson } from '../command.js';

type Values = { json?: boolean; watch?: boolean; check?: boolean; mqtt?: string; prefix?: string; site?: string; config?: string; secrets?: string };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'fleet',
    summary: 'show every terminal of the fleet from MQTT',
    audience: 'operations',
    details: `The central view of every terminal from the retained state and metrics on the broker:
state (online, degraded, offline, lost), last seen, scanners, queue depth, oldest pending punch,
dead letters, the last error that still holds (with when it began) and alerts.
A terminal is degraded when it runs but not fully: a scanner is not ready, delivery fails, or an
alert waits for a person (the reasons are in --json "degraded").
With --check it prints one line more, OK or CRITICAL, and exits 1 when a terminal is lost or
degraded or none has reported (for cron and Nagios-style checks); exit 0 otherwise.`,
  })
    .option('--watch', 'keep the view open and show every change (Ctrl-C to stop): redrawn in place on a terminal; with --json each print is one JSON line {"terminals": [...]}')
    .option('--check', 'exit 1 when a terminal is lost or degraded (or none reported), after one line OK or CRITICAL')
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--prefix <prefix>', 'the topic prefix (default: mqtt.prefix of the config)')
    .option('--site <site>', 'only the terminals of this site')
    .option('--config <file>', 'config file to read mqtt.* from')
    .option('--secrets <file>', 'secrets file with the MQTT credentials (and the ops key that edge-agent ops send signs commands with)');
  withJson(cmd, 'print {"terminals": [...]} as JSON on stdout');
  return action<Values>(cmd, async (values) => {
    const { loadConfig } = await import('../../config/config.js');
    const { locateConfig } = await import('../../config/locate.js');
    const { loadSecrets } = await import('../../config/secrets.js');
    const { AgentError } = await import('../../core/errors.js');
    const { checkFleet, FleetMonitor, formatFleetTable } = await import('../../ops/fleet.js');
    const { isInteractive, redrawScreen } = await import('../screen.js');
    if (values.check && values.watch) throw new AgentError('CLI_USAGE', '--check looks once and exits; leave out --watch', {}, { hint: 'run "edge-agent fleet --check" from cron, "edge-agent fleet --watch" to keep looking' });
    const { mqttClientOptions } = await import('../../daemon/upstreams.js');
    const mqttOverrides: Record<string, unknown> = {};
    if (values.mqtt) mqttOverrides.url = values.mqtt;
    if (values.prefix) mqttOverrides.prefix = values.prefix;
    // The one rule for the config; only its mqtt.* matter here, and --mqtt alone needs none.
    const location = values.mqtt && !values.config ? null : locateConfig(values.config);
    if (location?.note) process.stderr.write(`${location.note}\n`);
    const config = loadConfig({ file: location?.file ?? null, overrides: { mqtt: mqttOverrides } });
    const url = config.mqtt.url;
    if (!url) throw new AgentError('CLI_USAGE', 'no broker to read the fleet from', {}, { hint: 'pass --mqtt mqtt://host:1883 or set mqtt.url in the config' });
    const secrets = loadSecrets({ file: values.secrets ?? null });
    const monitor = new FleetMonitor({ prefix: config.mqtt.prefix, site: values.site ?? null });
    await monitor.start(url, { ...mqttClientOptions(config, secrets, `fleet-${process.pid}`), clean: true }, 400);
    const print = () => {
      if (values.json) printJson({ terminals: monitor.terminals });
      else process.stdout.write(`${formatFleetTable(monitor.terminals)}\n`);
    };
    if (values.check) {
      const check = checkFleet(monitor.terminals);
      await monitor.stop();
      if (values.json) printJson({ terminals: monitor.terminals, check });
      else process.stdout.write(`${formatFleetTable(monitor.terminals)}\n${check.summary}\n`);
      return check.ok ? 0 : 1;
    }
    const redraw = values.watch === true && !values.json && isInteractive();
    if (redraw) redrawScreen(formatFleetTable(monitor.terminals));
    else print();
    if (!values.json) {
      const { opsKeyLine } = await import('../../ops/ops-client.js');
      process.stdout.write(`${opsKeyLine(secrets, values.secrets ?? null)}\n`);
    }
    if (!values.watch) {
      await monitor.stop();
      return 0;
    }
    let pending: NodeJS.Timeout | null = null;
    monitor.on('change', () => {
      pending ??= setTimeout(() => {
        pending = null;
        if (redraw) return redrawScreen(formatFleetTable(monitor.terminals));
        if (!values.json) process.stdout.write('\n');
        print();
      }, 200);
    });
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await monitor.stop();
    return 0;
  });
}
