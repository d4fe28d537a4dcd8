/**
 * Tested in test/integration/provision-e2e.test.ts, test/integration/provision-mqtt-tls.test.ts,
 * test/integration/clock-e2e.test.ts and test/integration/scanner-mismatch.test.ts (edge-agent
 * doctor on real setups).
 */
import type { Command } from 'commander';
import { action, defineCommand, printJson, withJson } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';

type Values = CommonValues & { json?: boolean };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'doctor',
    summary: 'check config, secrets, API, MQTT, scanners, keys, database, disk, clock (trusted, held punches, last step) and outbox',
    audience: 'technician',
    details: `Checks the terminal: config valid; secrets readable and 0600; API token; MQTT connection; each
scanner answers; template key decrypts; database integrity; free disk; clock trusted (with the
punches held for it, the last step and alerts); outbox backlog and dead letters. Each check is pass, warn or fail with a hint.
The config is found as for every command: --config, else $EDGE_AGENT_CONFIG, else
/etc/edge-agent/config.yaml, else (in a checkout only, saying so) the embedded demo's; none found
is a failed config check naming where it looked.
Exit code 0 when nothing failed (warnings allowed), 1 when a check failed.`,
  });
  withJson(
    cmd,
    'print {"ok": bool, "checks": [{"name", "status", "detail", "hint"}], "clock": {trusted, source, lastTrustedAt, steps, lastStep, held, alerts}}',
  );
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values) => {
    const { configFromFlags } = await import('../../config/flags.js');
    const { callDaemon, controlSocketPath, isDaemonListening } = await import('../../daemon/control-socket.js');
    const { runDoctor } = await import('../../setup/doctor/runner.js');
    const { formatReport } = await import('../../setup/doctor/report.js');
    const { scannerProbe } = await import('../../setup/scanner-probe.js');
    const { verifyTemplateKey } = await import('../../store/template-cache.js');
    const { locateConfig } = await import('../../config/locate.js');
    // The one rule: on a terminal set up by install-service, `edge-agent doctor` alone checks the installed setup.
    const location = locateConfig(values.config);
    if (location.note) process.stderr.write(`${location.note}\n`);
    const report = await runDoctor({
      config: { file: location.file, overrides: configFromFlags(values) },
      location,
      daemonRunning: (dataDir) => isDaemonListening(controlSocketPath(dataDir)),
      heldScanners: async (dataDir) => {
        const r = (await callDaemon(controlSocketPath(dataDir), 'status', {})) as {
          info?: { scanners?: import('../../setup/doctor/scanners.js').HeldScanner[] };
        };
        return r.info?.scanners ?? null;
      },
      probeScanner: scannerProbe,
      verifyTemplateKey,
    });
    if (values.json) printJson(report);
    else process.stdout.write(formatReport(report));
    return report.ok ? 0 : 1;
  });
}
