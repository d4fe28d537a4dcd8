/**
 * What `edge-agent install-service` does with the files shipped in `systemd/`: check that the
 * service can run the command line, install a release side by side, write the unit
 * (`service-files/systemd-unit.ts`, `daemon-command.ts`), the NotifyAccess drop-in
 * (`notify-access.ts`) and the udev rules (`udev-rules.ts`) under a prefix (`/` on a terminal, a
 * temporary folder in tests), create the dedicated user where possible, and say what it did and
 * what is left to do.
 *
 * Tested in test/integration/systemd-unit.test.ts (install-service under a prefix: the files it writes,
 * an ExecStart the sandbox hides or a Node older than 20 refused, --dry-run, --iris-usb) and
 * test/unit/setup/releases.test.ts (install-service from a release: the release, the command, the drop-in).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic-file.js';
import { installRelease, readRelease, RELEASES_HOME, type ReleaseStep } from './releases.js';
import { CURRENT_ENTRY, commandScript, DAEMON_NODE_FLAGS, TERMINAL_CONFIG } from './service-files/daemon-command.js';
import { notifyAccessStep, ownUnixDgram } from './service-files/notify-access.js';
import {
  HIDDEN_FROM_SERVICE,
  hiddenPaths,
  nodeVersionOf,
  RULES_NAME,
  renderUnit,
  systemdDir,
  UNIT_NAME,
} from './service-files/systemd-unit.js';
import { listUsbSerialAdapters, renderRules, type UsbSerialAdapter, usbAdapterOf } from './service-files/udev-rules.js';

export interface InstallOptions {
  /** Root of the installation: `/` on a terminal. */
  prefix: string;
  dryRun: boolean;
  user: string;
  execStart: string;
  /** USB ids (`VVVV:PPPP`) of iris camera models to give /dev/irisN and group access. */
  irisUsb?: string[];
  /** Where the shipped files are (default: `systemdDir()`). */
  sourceDir?: string;
  /**
   * A release folder to install side by side under `<prefix>/opt/edge-agent/releases/` (the one
   * install-service runs from, when it runs from an unpacked release tarball), with the command
   * linked as `/usr/local/bin/edge-agent`.
   */
  release?: string | null;
  /** Serial ports of the scanners (`/dev/ttyUSB0`): their USB bridges become /dev/fingerprint0, 1, ... */
  scannerPorts?: string[];
  /** Where sysfs is (tests: a folder laid out like /sys). */
  sysfsRoot?: string;
}

export type InstallStep = ReleaseStep;

export function run(cmd: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: !r.error && r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}`.trim() };
}

function userExists(user: string): boolean {
  return run('getent', ['passwd', user]).ok;
}

/** Installs unit, rules, the config folder and the user; returns every step with its outcome. */
export function installService(options: InstallOptions): InstallStep[] {
  const src = options.sourceDir ?? systemdDir();
  const root = resolve(options.prefix);
  const onHost = root === '/';
  const steps: InstallStep[] = [];
  const act = options.dryRun ? 'would do' : 'done';
  const unitPath = join(root, 'etc/systemd/system', UNIT_NAME);
  const rulesPath = join(root, 'etc/udev/rules.d', RULES_NAME);
  const confDir = join(root, 'etc/edge-agent');

  // What the unit runs must be there for the service: checked before anything is written.
  const version = nodeVersionOf(options.execStart);
  const major = version ? Number(/^v?(\d+)/.exec(version)?.[1]) : NaN;
  const node = options.execStart.trim().split(/\s+/)[0];
  if (!(major >= 20)) {
    steps.push({
      action: 'check Node version',
      status: 'failed',
      detail: `${version ? `${node} is Node ${version}` : `cannot run ${node} --version`}; edge-agent needs Node 20 or newer: install it system-wide (Debian/Raspberry Pi OS: NodeSource's nodejs 20 or 22 into /usr/bin/node), then run install-service again with it`,
    });
  } else steps.push({ action: 'check Node version', status: 'done', detail: `${node} is Node ${version}` });
  const hidden = hiddenPaths(options.execStart);
  if (hidden.length && !onHost) {
    // Staged into another root (an SD card image, a test): its paths are the target's, and this
    // machine cannot say what the target hides. Said, not refused.
    steps.push({
      action: 'check ExecStart is visible to the service',
      status: 'skipped',
      detail: `staged under ${root}: on this machine ${hidden.join(', ')} would be hidden from the service (ProtectHome, PrivateTmp); make sure the target has them elsewhere`,
    });
  } else if (hidden.length) {
    steps.push({
      action: 'check ExecStart is visible to the service',
      status: 'failed',
      detail: `the unit runs with ProtectHome=yes and PrivateTmp=yes, which hide ${HIDDEN_FROM_SERVICE.join(', ')} from the service, so it could not start ${hidden.join(', ')}. Install the release under /opt/edge-agent (ExecStart=/usr/bin/node ${DAEMON_NODE_FLAGS.join(' ')} /opt/edge-agent/current/dist/src/cli/main.js run) with Node system-wide, and run install-service from there; or give --exec-start with paths the service can see`,
    });
  } else
    steps.push({
      action: 'check ExecStart is visible to the service',
      status: 'done',
      detail: `nothing it runs is under ${HIDDEN_FROM_SERVICE.join(', ')}`,
    });
  const adapters: UsbSerialAdapter[] = [];
  for (const port of options.scannerPorts ?? []) {
    const a = usbAdapterOf(port, options.sysfsRoot);
    if (a) adapters.push(a);
    else
      steps.push({
        action: 'name the scanner adapter',
        path: port,
        status: 'failed',
        detail: `${port} is not a USB serial bridge this machine has (unplugged, a typo, or the Pi UART, which is /dev/fingerprint-uart0 already): "edge-agent devices" lists the ports`,
      });
  }
  if (steps.some((s) => s.status === 'failed')) return steps;

  const releases = join(root, RELEASES_HOME, 'releases');
  // The unix-dgram addon the service will load: the installed release's, or this copy's own.
  let addon = options.release ? join(options.release, 'node_modules/unix-dgram') : ownUnixDgram();
  if (options.release && resolve(options.release).startsWith(`${releases}/`)) {
    // Already installed (by the package, or by install-service before): nothing to copy or link.
    steps.push({
      action: 'install release',
      path: options.release,
      status: 'skipped',
      detail: 'it runs from the installed releases already',
    });
  } else if (options.release) {
    steps.push(...installRelease(options.release, root, options.dryRun));
    if (!options.dryRun) addon = join(releases, readRelease(options.release)!.version, 'node_modules/unix-dgram');
    const bin = join(root, 'usr/local/bin/edge-agent');
    if (!options.dryRun) writeFileAtomic(bin, commandScript(), 0o755);
    steps.push({
      action: 'write the command',
      path: bin,
      status: act,
      detail: `runs ${CURRENT_ENTRY} (with ${TERMINAL_CONFIG} once provision wrote it)`,
    });
  }

  // The Debian package ships its unit in /lib/systemd/system; a copy in /etc would hide its updates.
  const packaged = join(root, 'lib/systemd/system', UNIT_NAME);
  if (existsSync(packaged)) {
    steps.push({
      action: 'write systemd unit',
      path: unitPath,
      status: 'skipped',
      detail: `the package's unit ${packaged} is used (change it with systemctl edit edge-agent)`,
    });
  } else {
    const unit = renderUnit(readFileSync(join(src, UNIT_NAME), 'utf8'), options.execStart)
      .replace(/^User=.*$/m, `User=${options.user}`)
      .replace(/^Group=.*$/m, `Group=${options.user}`);
    if (!options.dryRun) writeFileAtomic(unitPath, unit, 0o644);
    steps.push({ action: 'write systemd unit', path: unitPath, status: act, detail: `ExecStart=${options.execStart}` });
    // The node the unit runs: ExecStart's program.
    steps.push(notifyAccessStep(root, addon, options.execStart.split(/\s+/)[0]!, options.dryRun));
  }

  const rules = renderRules(readFileSync(join(src, RULES_NAME), 'utf8'), options.user, options.irisUsb, adapters);
  if (!options.dryRun) writeFileAtomic(rulesPath, rules, 0o644);
  const iris = options.irisUsb?.length
    ? `/dev/irisN for ${options.irisUsb.join(', ')}`
    : 'no iris camera model given (--iris-usb VVVV:PPPP)';
  const named = adapters.map(
    (a, i) =>
      `/dev/fingerprint${i} = ${a.port} (${a.vendor}:${a.product} ${a.serial ? `serial ${a.serial}` : `on USB port ${a.usbPath}, it has no serial number`})`,
  );
  const plugged = adapters.length
    ? []
    : listUsbSerialAdapters(options.sysfsRoot).map((a) => `${a.port} (${a.vendor}:${a.product}${a.serial ? ` serial ${a.serial}` : ''})`);
  const fingers = named.length
    ? named.join(', ')
    : `no scanner adapter named (--scanner-port PORT names its USB bridge /dev/fingerprint0 by serial number${plugged.length ? `; plugged in now: ${plugged.join(', ')}` : ''})`;
  steps.push({
    action: 'write udev rules',
    path: rulesPath,
    status: act,
    detail: `${fingers}; the Pi UART (serial0) is /dev/fingerprint-uart0; ${iris}`,
  });

  // 0755: the service user reads config.yaml here; secrets.yaml stays 0600 root and reaches the
  // service through LoadCredential=.
  if (!options.dryRun) mkdirSync(confDir, { recursive: true, mode: 0o755 });
  steps.push({
    action: 'create config folder',
    path: confDir,
    status: act,
    detail: 'edge-agent provision writes config.yaml and secrets.yaml (0600) here',
  });

  const useradd = [
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/var/lib/edge-agent',
    '--shell',
    '/usr/sbin/nologin',
    options.user,
  ];
  if (!onHost) {
    steps.push({
      action: 'create user',
      status: 'skipped',
      detail: `not on the live system (prefix ${root}); on the terminal run: useradd ${useradd.join(' ')}`,
    });
  } else if (userExists(options.user)) {
    steps.push({ action: 'create user', status: 'skipped', detail: `user ${options.user} exists` });
  } else if (options.dryRun) {
    steps.push({ action: 'create user', status: 'would do', detail: `useradd ${useradd.join(' ')}` });
  } else if (process.getuid?.() !== 0) {
    steps.push({ action: 'create user', status: 'failed', detail: `needs root: sudo useradd ${useradd.join(' ')}` });
  } else {
    const r = run('useradd', useradd);
    steps.push({ action: 'create user', status: r.ok ? 'done' : 'failed', detail: r.ok ? `system user ${options.user}` : r.out });
  }

  if (onHost) {
    for (const [action, cmd, args] of [
      ['reload systemd', 'systemctl', ['daemon-reload']],
      ['reload udev rules', 'udevadm', ['control', '--reload']],
      ['apply udev rules to plugged devices', 'udevadm', ['trigger', '--subsystem-match=tty', '--subsystem-match=hidraw']],
    ] as Array<[string, string, string[]]>) {
      if (options.dryRun) steps.push({ action, status: 'would do', detail: `${cmd} ${args.join(' ')}` });
      else {
        const r = run(cmd, args);
        steps.push({
          action,
          status: r.ok ? 'done' : 'failed',
          detail: r.ok ? `${cmd} ${args.join(' ')}` : `${cmd} ${args.join(' ')}: ${r.out.split('\n')[0]}`,
        });
      }
    }
  }
  return steps;
}
