/**
 * Tested in test/integration/fleet-cli.test.ts (the fleet once every retained message arrived,
 * --watch, giving up) and test/integration/cli-management.test.ts (exit 1 once a terminal is
 * degraded).
 */
import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, withJson } from '../command.js';
import { forTerminal, out, sanitizedStream } from '../output.js';

type Values = {
  json?: boolean;
  watch?: boolean;
  check?: boolean;
  wait?: string;
  mqtt?: string;
  prefix?: string;
  site?: string;
  config?: string;
  secrets?: string;
};

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'fleet',
    summary: 'show every terminal of the fleet from MQTT',
    audience: 'operations',
    details: `The central view of every terminal from the retained state and metrics on the broker:
state (online, degraded, offline, lost), last seen, scanners, queue depth, oldest pending punch,
dead letters, the last error that still holds (with when it began) and alerts.
A terminal is degraded when it runs but not fully: a scanner is not ready, its clock is not
trusted, its outbox is full, delivery fails, or an alert waits for a person (the reasons are in
--json "reasons" and "degraded"); the console, its /metrics and Home Assistant say the same.
The view is printed once the broker has delivered every retained message (or --wait seconds
passed: then it says so, and how many terminals had arrived).
With --watch only what changes follows: a line per terminal change (state, queue, dead letters,
last error, version, clock), never the whole fleet again; with a slow reader changes are
coalesced per terminal. On a screen that holds the whole table the view is redrawn in place instead.
With --check it prints one line more, OK or CRITICAL, and exits 1 when a terminal is lost or
degraded or none has reported (for cron and Nagios-style checks); exit 0 otherwise.`,
  })
    .option(
      '--watch',
      'keep watching after the first view (Ctrl-C to stop): a line per terminal change (redrawn in place on a screen that holds the table); with --json each change is one JSON line {"terminal": {...}, "changed": [...]}',
    )
    .option('--wait <seconds>', 'give up waiting for the retained messages of the first view after this long (default 30)')
    .option('--check', 'exit 1 when a terminal is lost or degraded (or none reported), after one line OK or CRITICAL')
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--prefix <prefix>', 'the topic prefix (default: mqtt.prefix of the config)')
    .option('--site <site>', 'only the terminals of this site')
    .option('--config <file>', 'config file to read mqtt.* from')
    .option('--secrets <file>', 'secrets file with the MQTT credentials (and the ops key that edge-agent ops send signs commands with)');
  withJson(cmd, 'print {"terminals": [...], "complete", "retained", "repaired", "waitedMs"} as JSON on stdout');
  return action<Values>(cmd, async (values) => {
    const { loadConfig } = await import('../../config/load.js');
    const { locateConfig } = await import('../../config/locate.js');
    const { loadSecrets } = await import('../../config/secrets.js');
    const { AgentError } = await import('../../core/errors.js');
    const { checkFleet, FleetMonitor, FleetWatch, formatFleetTable } = await import('../../ops/fleet.js');
    const { isInteractive, redrawScreen } = await import('../screen.js');
    if (values.check && values.watch)
      throw new AgentError(
        'CLI_USAGE',
        '--check looks once and exits; leave out --watch',
        {},
        { hint: 'run "edge-agent fleet --check" from cron, "edge-agent fleet --watch" to keep looking' },
      );
    const { mqttClientOptions } = await import('../../daemon/upstreams.js');
    const waitSec = intFlag('wait', values.wait, 30)!;
    if (waitSec < 1)
      throw new AgentError(
        'CLI_USAGE',
        `--wait takes a number of seconds of at least 1, got ${waitSec}`,
        { flag: 'wait' },
        { hint: 'e.g. --wait 60 for a large fleet on a slow link' },
      );
    const mqttOverrides: Record<string, unknown> = {};
    if (values.mqtt) mqttOverrides.url = values.mqtt;
    if (values.prefix) mqttOverrides.prefix = values.prefix;
    // The one rule for the config; only its mqtt.* matter here, and --mqtt alone needs none.
    const location = values.mqtt && !values.config ? null : locateConfig(values.config);
    if (location?.note) process.stderr.write(`${location.note}\n`);
    const config = loadConfig({ file: location?.file ?? null, overrides: { mqtt: mqttOverrides } });
    const url = config.mqtt.url;
    if (!url)
      throw new AgentError(
        'CLI_USAGE',
        'no broker to read the fleet from',
        {},
        { hint: 'pass --mqtt mqtt://host:1883 or set mqtt.url in the config' },
      );
    const secrets = loadSecrets({ file: values.secrets ?? null });
    const { keyringOf } = await import('../../ops/ops-auth.js');
    const monitor = new FleetMonitor({
      prefix: config.mqtt.prefix,
      site: values.site ?? null,
      keyring: keyringOf(secrets),
      ignoreUnverified: config.ops.unverifiedTelemetry === 'ignore',
    });
    const first = await monitor.start(
      url,
      { ...mqttClientOptions(config, secrets, `fleet-${process.pid}`), clean: true },
      { maxWaitMs: waitSec * 1000 },
    );
    const note = first.complete
      ? `(${first.terminals} terminal(s); every retained message delivered, ${first.retained} in ${(first.waitedMs / 1000).toFixed(1)} s${first.repaired ? `, ${first.repaired} of them asked for again after the broker dropped them` : ''})`
      : `(gave up waiting after ${(first.waitedMs / 1000).toFixed(1)} s: ${first.terminals} terminal(s) and ${first.retained} retained message(s) had arrived; more may follow)`;
    const firstView = {
      terminals: monitor.terminals,
      complete: first.complete,
      retained: first.retained,
      repaired: first.repaired,
      waitedMs: first.waitedMs,
    };
    if (values.check) {
      const check = checkFleet(monitor.terminals);
      await monitor.stop();
      if (values.json) printJson({ ...firstView, check });
      else out(`${formatFleetTable(monitor.terminals)}\n${note}\n${check.summary}\n`);
      return check.ok ? 0 : 1;
    }
    // Redrawn in place only for a person at a screen that holds the whole table: a larger fleet
    // (or a pipe, or --json) gets a line per change, never the whole fleet again.
    const fits = () => monitor.size + 4 <= (process.stdout.rows ?? 0);
    const redraw = values.watch === true && !values.json && isInteractive() && fits();
    // Everything from the first view to the watch's snapshot of it runs without yielding: a change
    // arriving in between would otherwise be in the snapshot and never printed.
    const { opsKeyLine } = await import('../../ops/ops-client.js');
    if (redraw) redrawScreen(forTerminal(`${formatFleetTable(monitor.terminals)}\n${note}`));
    else if (values.json) printJson(firstView);
    else out(`${formatFleetTable(monitor.terminals)}\n${note}\n`);
    if (!values.json) out(`${opsKeyLine(secrets, values.secrets ?? null)}\n`);
    if (!values.watch) {
      await monitor.stop();
      return 0;
    }
    let pending: NodeJS.Timeout | null = null;
    const onChange = () => {
      // At most five redraws a second, and none while the screen has not taken the last one.
      pending ??= setTimeout(() => {
        pending = null;
        if (!process.stdout.writableNeedDrain) redrawScreen(forTerminal(formatFleetTable(monitor.terminals)));
      }, 200);
    };
    if (redraw) monitor.on('change', onChange);
    const watch = redraw ? null : new FleetWatch(monitor, sanitizedStream(process.stdout), { json: values.json === true });
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    watch?.stop();
    monitor.off('change', onChange);
    if (pending) clearTimeout(pending);
    await monitor.stop();
    // What is left for stdout is at most a line beyond its buffer; a reader that stopped reading
    // must not keep the process alive for it.
    setTimeout(() => process.exit(0), 2000).unref();
    return 0;
  });
}
