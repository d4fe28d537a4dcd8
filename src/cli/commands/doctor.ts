import { existsSync } from 'node:fs';
import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { COMMON_FLAGS, configFromFlags } from '../../config/config.js';
import { callDaemon, controlSocketPath, isDaemonListening } from '../../daemon/control-socket.js';
import { formatReport, runDoctor, type HeldScanner } from '../../setup/doctor.js';
import { scannerProbe } from '../../setup/scanner-probe.js';
import { verifyTemplateKey } from '../../store/template-cache.js';

const INSTALLED_CONFIG = '/etc/edge-agent/config.yaml';

const usage = `usage: edge-agent doctor [--config FILE] [--secrets FILE] [--json] [run's flags]
  --config FILE  default $EDGE_AGENT_CONFIG, else /etc/edge-agent/config.yaml when it exists
  Checks the terminal: config valid; secrets readable and 0600; API token; MQTT connection; each
  scanner answers; template key decrypts; database integrity; free disk; clock synchronized;
  outbox backlog and dead letters. Each check is pass, warn or fail with a hint.
  --json   print {"ok": bool, "checks": [{"name", "status", "detail", "hint"}]}
  Exit code 0 when nothing failed (warnings allowed), 1 when a check failed.`;

const command: Command = {
  summary: 'check config, secrets, API, MQTT, scanners, keys, database, disk, clock and outbox',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { ...COMMON_FLAGS, json: { type: 'boolean' } }, usage, false);
    // On a terminal set up by install-service, `edge-agent doctor` alone checks the installed setup.
    const file = values.config ?? process.env.EDGE_AGENT_CONFIG ?? (existsSync(INSTALLED_CONFIG) ? INSTALLED_CONFIG : null);
    const report = await runDoctor({
      config: { file, overrides: configFromFlags(values) },
      daemonRunning: (dataDir) => isDaemonListening(controlSocketPath(dataDir)),
      heldScanners: async (dataDir) => {
        const r = (await callDaemon(controlSocketPath(dataDir), 'status', {})) as { info?: { scanners?: HeldScanner[] } };
        return r.info?.scanners ?? null;
      },
      probeScanner: scannerProbe,
      verifyTemplateKey,
    });
    if (values.json) printJson(report);
    else process.stdout.write(formatReport(report));
    return report.ok ? 0 : 1;
  },
};
export default command;
