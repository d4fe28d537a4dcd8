import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { loadConfig } from '../../config/config.js';
import { loadSecrets } from '../../config/secrets.js';
import { AgentError } from '../../core/errors.js';
import { FleetMonitor, formatFleetTable } from '../../ops/fleet.js';
import { mqttClientOptions } from '../../daemon/upstreams.js';

const usage = `usage: edge-agent fleet [--json] [--watch] [--mqtt URL] [--prefix P] [--site S] [--config FILE] [--secrets FILE]
  The central view of every terminal from the retained state and metrics on the broker:
  state, last seen, queue depth, oldest pending punch, dead letters, last error.
  --watch keeps the view open and prints it again on every change (Ctrl-C to stop);
  with --json each print is one JSON line {"terminals": [...]}.`;

const command: Command = {
  summary: 'show every terminal of the fleet from MQTT',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, {
      json: { type: 'boolean' }, watch: { type: 'boolean' }, mqtt: { type: 'string' }, prefix: { type: 'string' }, site: { type: 'string' },
      config: { type: 'string' }, secrets: { type: 'string' },
    }, usage, false);
    const mqttOverrides: Record<string, unknown> = {};
    if (values.mqtt) mqttOverrides.url = values.mqtt;
    if (values.prefix) mqttOverrides.prefix = values.prefix;
    const config = loadConfig({ file: values.config ?? null, overrides: { mqtt: mqttOverrides } });
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
  },
};
export default command;
