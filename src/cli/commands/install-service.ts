/**
 * Tested in test/integration/systemd-unit.test.ts (unit and rules installed under a prefix,
 * refusals, --dry-run).
 */
import type { Command } from 'commander';
import { action, defineCommand, printJson, repeatable, withJson } from '../command.js';

type Values = {
  prefix?: string;
  'dry-run'?: boolean;
  user?: string;
  'iris-usb'?: string[];
  'scanner-port'?: string[];
  'exec-start'?: string;
  json?: boolean;
};

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'install-service',
    summary: 'install the systemd unit, udev rules and service user (and, from a release tarball, the release itself)',
    audience: 'technician',
    details: `Installs the systemd unit (edge-agent.service, Type=notify with watchdog and hardening) and the
udev rules (/dev/fingerprintN, /dev/irisN, group access), creates /etc/edge-agent and the
dedicated system user, reloads systemd and udev, and prints every step.
First it checks that the unit can run what it names: Node 20 or newer, and nothing under /home,
/root, /run/user, /tmp or /var/tmp, which the unit's sandbox (ProtectHome, PrivateTmp) hides from
the service; otherwise it refuses and writes nothing (install the release under /opt/edge-agent).
The unit says
NotifyAccess=main (the agent notifies systemd itself through the unix-dgram addon); where that
addon does not load with the unit's node, a drop-in (edge-agent.service.d/notify-access.conf)
says NotifyAccess=all, and an install where it loads removes it.
Run from an unpacked release tarball, it first checks the release against its SHA256SUMS and
installs it as /opt/edge-agent/releases/<version> with "current" pointing at it (the release that
was current becomes "previous": edge-agent rollback goes back) and /usr/local/bin/edge-agent.
Then: edge-agent provision, and systemctl enable --now edge-agent`,
  })
    .option('--prefix <dir>', 'install under DIR instead of / (packaging, tests); the user is not created')
    .option('--dry-run', 'print what would be done, change nothing')
    .option('--user <name>', 'the service user (default edge-agent)')
    .addOption(
      repeatable(
        '--iris-usb <vvvv:pppp>',
        'USB ids of an iris camera model (edge-agent devices, lsusb): gives it /dev/irisN and group access; repeatable',
      ),
    )
    .addOption(
      repeatable(
        '--scanner-port <port>',
        "a fingerprint scanner's serial port (/dev/ttyUSB0): its USB bridge becomes /dev/fingerprintN by serial number, never every bridge of that make; repeatable",
      ),
    )
    .option('--exec-start <cmd>', 'the ExecStart command line (default: this node and this edge-agent, "run")');
  withJson(cmd);
  return action<Values>(cmd, async (values) => {
    const { installService } = await import('../../setup/service-files.js');
    const { defaultExecStart, releaseExecStart } = await import('../../setup/service-files/daemon-command.js');
    const { runningReleaseDir } = await import('../../setup/releases.js');
    // From a release (an unpacked tarball, or one the package installed): the unit runs "current".
    const release = runningReleaseDir();
    const steps = installService({
      prefix: values.prefix ?? '/',
      dryRun: values['dry-run'] ?? false,
      user: values.user ?? 'edge-agent',
      release,
      execStart: values['exec-start'] ?? (release ? releaseExecStart() : defaultExecStart()),
      irisUsb: values['iris-usb'] ?? [],
      scannerPorts: values['scanner-port'] ?? [],
    });
    if (values.json) printJson({ ok: steps.every((s) => s.status !== 'failed'), steps });
    else {
      for (const s of steps)
        process.stdout.write(
          `${s.status.padEnd(9)} ${s.action}${s.path ? ` ${s.path}` : ''}${s.detail ? `\n          ${s.detail}` : ''}\n`,
        );
      const failed = steps.filter((s) => s.status === 'failed').length;
      // A failed check stops install-service before the unit is written.
      const refused = failed > 0 && !steps.some((s) => s.action === 'write systemd unit');
      process.stdout.write(
        refused
          ? `\nrefused: nothing written (see above).\n`
          : failed
            ? `\n${failed} step(s) failed: see above.\n`
            : `\nnext: edge-agent provision, then systemctl enable --now edge-agent\n`,
      );
    }
    return steps.some((s) => s.status === 'failed') ? 1 : 0;
  });
}
