import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { defaultExecStart, installService } from '../../setup/service-files.js';

const usage = `usage: edge-agent install-service [--prefix DIR] [--dry-run] [--user NAME] [--iris-usb VVVV:PPPP]... [--exec-start CMD] [--json]
  Installs the systemd unit (edge-agent.service, Type=notify with watchdog and hardening) and the
  udev rules (/dev/fingerprintN, /dev/irisN, group access), creates /etc/edge-agent and the
  dedicated system user, reloads systemd and udev, and prints every step.
  --prefix DIR       install under DIR instead of / (packaging, tests); the user is not created
  --dry-run          print what would be done, change nothing
  --user NAME        the service user (default edge-agent)
  --iris-usb ID      USB ids VVVV:PPPP of an iris camera model (edge-agent devices, lsusb): gives
                     it /dev/irisN and group access; repeatable
  --exec-start CMD   the ExecStart command line (default: this node and this edge-agent, "run")
  Then: edge-agent provision, and systemctl enable --now edge-agent`;

const command: Command = {
  summary: 'install the systemd unit, udev rules and service user',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(
      argv,
      { prefix: { type: 'string' }, 'dry-run': { type: 'boolean' }, user: { type: 'string' }, 'iris-usb': { type: 'string', multiple: true }, 'exec-start': { type: 'string' }, json: { type: 'boolean' } },
      usage,
      false,
    );
    const steps = installService({
      prefix: values.prefix ?? '/',
      dryRun: values['dry-run'] ?? false,
      user: values.user ?? 'edge-agent',
      execStart: values['exec-start'] ?? defaultExecStart(),
      irisUsb: values['iris-usb'] ?? [],
    });
    if (values.json) printJson({ ok: steps.every((s) => s.status !== 'failed'), steps });
    else {
      for (const s of steps) process.stdout.write(`${s.status.padEnd(9)} ${s.action}${s.path ? ` ${s.path}` : ''}${s.detail ? `\n          ${s.detail}` : ''}\n`);
      const failed = steps.filter((s) => s.status === 'failed').length;
      process.stdout.write(failed ? `\n${failed} step(s) failed: see above.\n` : `\nnext: edge-agent provision, then systemctl enable --now edge-agent\n`);
    }
    return steps.some((s) => s.status === 'failed') ? 1 : 0;
  },
};
export default command;
