import type { Command } from 'commander';
import { action, defineCommand, printJson, withJson } from '../command.js';

type Values = { json?: boolean; watch?: boolean; mqtt?: string; prefix?: string; site?: string; config?: string; secrets?: string };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'fleet',
    summary: 'show every terminal of the fleet from MQTT',
    audience: 'operations',
    details: `The central view of every terminal from the retained state and metrics on the broker:
state, last seen, queue depth, oldest pending punch, dead letters, last error.`,
  })
    .option('--watch', 'keep the view open and print it again on every change (Ctrl-C to stop); with --json each print is one JSON line {"terminals": [...]}')
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--prefix <prefix>', 'the topic prefix (default: mqtt.prefix of the config)')
    .option('--site <site>', 'only the terminals of this site')
    .option('--config <file>', 'config file to read mqtt.* from')
    .option('--secrets <file>', 'secrets file with the MQTT credentials');
  withJson(cmd, 'print {"terminals": [...]} as JSON on stdout');
  return action<Values>(cmd, async (values) => {
    const { loadConfig } = await import('../../config/config.js');
    const { locateConfig } = await import('../../config/locate.js');
    const { loadSecrets } = await import('../../config/secrets.js');
    const { AgentError } = await import('../../core/errors.js');
    const { FleetMonitor, formatFleetTable } = await import('../../ops/fleet.js');
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
    print();
    if (!values.watch) {
      await monitor.stop();
      return 0;
    }
    let pending: NodeJS.Timeout | null = null;
    monitor.on('change', () => {
      pending ??= setTimeout(() => {
        pending = null;
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
