import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, withJson } from '../command.js';

type Values = { json?: boolean; watch?: boolean; wait?: string; mqtt?: string; prefix?: string; site?: string; config?: string; secrets?: string };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'fleet',
    summary: 'show every terminal of the fleet from MQTT',
    audience: 'operations',
    details: `The central view of every terminal from the retained state and metrics on the broker:
state, last seen, queue depth, oldest pending punch, dead letters, last error.
The view is printed once the broker has delivered every retained message (or --wait seconds
passed: then it says so, and how many terminals had arrived). With --watch only what changes
follows: a line per terminal change (state, queue, dead letters, last error, version, clock),
never the whole fleet again; with a slow reader changes are coalesced per terminal.`,
  })
    .option('--watch', 'keep watching after the first view (Ctrl-C to stop) and print a line per terminal change; with --json each change is one JSON line {"terminal": {...}, "changed": [...]}')
    .option('--wait <seconds>', 'give up waiting for the retained messages of the first view after this long (default 30)')
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--prefix <prefix>', 'the topic prefix (default: mqtt.prefix of the config)')
    .option('--site <site>', 'only the terminals of this site')
    .option('--config <file>', 'config file to read mqtt.* from')
    .option('--secrets <file>', 'secrets file with the MQTT credentials');
  withJson(cmd, 'print {"terminals": [...], "complete", "retained", "waitedMs"} as JSON on stdout');
  return action<Values>(cmd, async (values) => {
    const { loadConfig } = await import('../../config/config.js');
    const { loadSecrets } = await import('../../config/secrets.js');
    const { AgentError } = await import('../../core/errors.js');
    const { FleetMonitor, FleetWatch, formatFleetTable } = await import('../../ops/fleet.js');
    const { mqttClientOptions } = await import('../../daemon/upstreams.js');
    const waitSec = intFlag('wait', values.wait, 30)!;
    if (waitSec < 1) throw new AgentError('CLI_USAGE', `--wait takes a number of seconds of at least 1, got ${waitSec}`, { flag: 'wait' }, { hint: 'e.g. --wait 60 for a large fleet on a slow link' });
    const mqttOverrides: Record<string, unknown> = {};
    if (values.mqtt) mqttOverrides.url = values.mqtt;
    if (values.prefix) mqttOverrides.prefix = values.prefix;
    const config = loadConfig({ file: values.config ?? null, overrides: { mqtt: mqttOverrides } });
    const url = config.mqtt.url;
    if (!url) throw new AgentError('CLI_USAGE', 'no broker to read the fleet from', {}, { hint: 'pass --mqtt mqtt://host:1883 or set mqtt.url in the config' });
    const secrets = loadSecrets({ file: values.secrets ?? null });
    const monitor = new FleetMonitor({ prefix: config.mqtt.prefix, site: values.site ?? null });
    const first = await monitor.start(url, { ...mqttClientOptions(config, secrets, `fleet-${process.pid}`), clean: true }, { maxWaitMs: waitSec * 1000 });
    const note = first.complete
      ? `(${first.terminals} terminal(s); every retained message delivered, ${first.retained} in ${(first.waitedMs / 1000).toFixed(1)} s)`
      : `(gave up waiting after ${(first.waitedMs / 1000).toFixed(1)} s: ${first.terminals} terminal(s) and ${first.retained} retained message(s) had arrived; more may follow)`;
    if (values.json) printJson({ terminals: monitor.terminals, complete: first.complete, retained: first.retained, waitedMs: first.waitedMs });
    else process.stdout.write(`${formatFleetTable(monitor.terminals)}\n${note}\n`);
    if (!values.watch) {
      await monitor.stop();
      return 0;
    }
    const watch = new FleetWatch(monitor, process.stdout, { json: values.json === true });
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    watch.stop();
    await monitor.stop();
    // What is left for stdout is at most a line beyond its buffer; a reader that stopped reading
    // must not keep the process alive for it.
    setTimeout(() => process.exit(0), 2000).unref();
    return 0;
  });
}
