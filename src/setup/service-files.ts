/**
 * The systemd unit and udev rules shipped in `systemd/`, and what `edge-agent install-service`
 * does with them: render the unit's ExecStart for where this copy of the agent lives, write the
 * unit and the rules under a prefix (`/` on a terminal, a temporary folder in tests), create the
 * dedicated user where possible, and say what it did and what is left to do.
 *
 * Tested in test/integration/systemd-unit.test.ts (the unit and udev rules: systemd-analyze verify
 * and security, install under a prefix, refusals, --dry-run) and test/unit/setup/releases.test.ts
 * (install-service from a release).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '../core/errors.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import { installRelease, readRelease, RELEASES_HOME, type ReleaseStep } from './releases.js';

/** The repository's (or the installed package's) `systemd/` folder. */
export function systemdDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'systemd', 'edge-agent.service'))) return join(dir, 'systemd');
    dir = dirname(dir);
  }
  throw new AgentError(
    'AGENT_FILES_MISSING',
    'cannot find the systemd/ folder of edge-agent',
    {},
    { hint: 'reinstall edge-agent; the package ships systemd/edge-agent.service' },
  );
}

export const UNIT_NAME = 'edge-agent.service';
export const RULES_NAME = '99-edge-agent.rules';

/** Sections of a unit file with every assignment in order (keys may repeat). */
export function parseUnit(text: string): Map<string, Array<[string, string]>> {
  const out = new Map<string, Array<[string, string]>>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const m = line.match(/^\[(.+)\]$/);
    if (m) {
      section = m[1]!;
      if (!out.has(section)) out.set(section, []);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0) out.get(section)?.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return out;
}

/**
 * Node flags of the daemon (npm run bench:scale measures them). Flags must be on node's command
 * line: V8 sizes its heap at start, and NODE_OPTIONS refuses the second one.
 * - `--max-semi-space-size=4`: V8 lets the young generation grow to 3 × 16 MB under a high
 *   allocation rate (draining a backlog): on a small board that is a fifth of the agent's memory
 *   for little speed.
 * - `--heap-growing-percent=20`: after each full collection the old generation may grow by 20 %
 *   before the next one, instead of up to 2-4 × what was live. Draining a million punches, the
 *   garbage of the batches in flight otherwise piled up to a 76 MB heap (RSS peaks of 160 MB);
 *   with it the heap stays under 30 MB and the RSS near 110 MB, at the same drain rate.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/**
 * Environment of the daemon (Environment= lines of the unit). glibc raises its mmap threshold
 * each time a large block is freed, after which large blocks come from the heap and their memory
 * stays with the process once freed: after the index snapshot is read in 64 KB slices, a terminal
 * held 10-25 MB more for good, depending on the order of frees. A fixed threshold returns such
 * blocks to the system when they are freed.
 */
export const DAEMON_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '65536' };

/** The command line that runs this copy of the agent: `node DAEMON_NODE_FLAGS [--import tsx] ENTRY run`. */
export function defaultExecStart(entry = process.argv[1] ?? ''): string {
  const parts = [process.execPath, ...DAEMON_NODE_FLAGS];
  if (entry.endsWith('.ts')) {
    // Running from the sources: tsx compiles on the fly (an installed package runs dist/*.js).
    parts.push('--import', createRequire(import.meta.url).resolve('tsx'));
  }
  parts.push(resolve(entry), 'run');
  return parts.join(' ');
}

/** The entry point of the current release, as the unit and the command link name it. */
export const CURRENT_ENTRY = `/${RELEASES_HOME}/current/dist/src/cli/main.js`;

/** The command line that runs whichever release is current (an installed release), with DAEMON_NODE_FLAGS. */
export function releaseExecStart(node = process.execPath): string {
  return [node, ...DAEMON_NODE_FLAGS, CURRENT_ENTRY, 'run'].join(' ');
}

/** The terminal's config file, the one provision writes and the service runs with. */
export const TERMINAL_CONFIG = '/etc/edge-agent/config.yaml';

/**
 * The `edge-agent` command of an installed release (/usr/bin/edge-agent from the package,
 * /usr/local/bin/edge-agent from install-service): runs the current release and, when no config
 * is named, the terminal's own once it exists, so "sudo edge-agent queue status" looks at the
 * service's outbox, not at ./data.
 */
export function commandScript(node = process.execPath): string {
  return `#!/bin/sh
# edge-agent: the current release (${`/${RELEASES_HOME}/current`}); written by the edge-agent package or install-service.
if [ -z "\${EDGE_AGENT_CONFIG:-}" ] && [ -f ${TERMINAL_CONFIG} ]; then
  EDGE_AGENT_CONFIG=${TERMINAL_CONFIG}
  export EDGE_AGENT_CONFIG
fi
exec ${node} ${CURRENT_ENTRY} "$@"
`;
}

/**
 * The shipped unit with its ExecStart replaced and, with `notifyAccess`, its NotifyAccess=.
 * Everything else stays as shipped. (install-service and the package keep the shipped
 * NotifyAccess=main and add the drop-in below where the addon does not load.)
 */
export function renderUnit(template: string, execStart: string, notifyAccess?: 'main' | 'all'): string {
  if (!/^ExecStart=.*$/m.test(template)) throw new AgentError('AGENT_FILES_MISSING', 'the unit template has no ExecStart line', {});
  const unit = template.replace(/^ExecStart=.*$/m, `ExecStart=${execStart}`);
  return notifyAccess ? unit.replace(/^NotifyAccess=.*$/m, `NotifyAccess=${notifyAccess}`) : unit;
}

/** What the unit's sandbox hides from the service: ProtectHome=yes and PrivateTmp=yes. */
export const HIDDEN_FROM_SERVICE = ['/home', '/root', '/run/user', '/tmp', '/var/tmp'] as const;

/** The absolute paths of a command line that the service could not see (symbolic links followed). */
export function hiddenPaths(execStart: string): string[] {
  const out: string[] = [];
  for (const word of execStart.split(/\s+/)) {
    if (!word.startsWith('/')) continue;
    let real = word;
    try {
      real = realpathSync(word);
    } catch {
      // not there (yet): judged as written
    }
    for (const p of new Set([word, real]))
      if (HIDDEN_FROM_SERVICE.some((h) => p === h || p.startsWith(`${h}/`))) out.push(p === word ? word : `${word} (-> ${real})`);
  }
  return [...new Set(out)];
}

/** The Node version of the command line's first word (`v20.11.1`), or null when it cannot be run. */
export function nodeVersionOf(execStart: string): string | null {
  const node = execStart.trim().split(/\s+/)[0] ?? '';
  if (node === process.execPath) return process.version;
  const r = spawnSync(node, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return !r.error && r.status === 0 ? r.stdout.trim() : null;
}

/** The USB bridge behind a serial port, from sysfs: what a udev rule can name it by. */
export interface UsbSerialAdapter {
  /** The port as given (`/dev/ttyUSB0`) and its kernel name (`ttyUSB0`). */
  port: string;
  kernel: string;
  vendor: string;
  product: string;
  /** The bridge's serial number; null for bridges without one (CH340). */
  serial: string | null;
  /** The USB device's name in sysfs (`1-1.3`): the physical port it is plugged into. */
  usbPath: string;
}

function readAttr(dir: string, name: string): string | null {
  try {
    return readFileSync(join(dir, name), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Reads a serial port's USB bridge from sysfs; null when the port is not on USB (a pty, the Pi UART). */
export function usbAdapterOf(port: string, sysfsRoot = '/sys'): UsbSerialAdapter | null {
  let kernel = basename(port);
  try {
    kernel = basename(realpathSync(port));
  } catch {
    // a name only (tests, a port not plugged in): taken as the kernel name
  }
  let dir: string;
  try {
    dir = realpathSync(join(sysfsRoot, 'class/tty', kernel, 'device'));
  } catch {
    return null;
  }
  for (let i = 0; i < 6 && dir.startsWith(sysfsRoot) && dir !== sysfsRoot; i++, dir = dirname(dir)) {
    const vendor = readAttr(dir, 'idVendor');
    const product = readAttr(dir, 'idProduct');
    if (vendor && product)
      return {
        port,
        kernel,
        vendor: vendor.toLowerCase(),
        product: product.toLowerCase(),
        serial: readAttr(dir, 'serial'),
        usbPath: basename(dir),
      };
  }
  return null;
}

/** Every USB serial bridge plugged in now (ttyUSB*, ttyACM*), for the technician to choose from. */
export function listUsbSerialAdapters(sysfsRoot = '/sys'): UsbSerialAdapter[] {
  let names: string[] = [];
  try {
    names = readdirSync(join(sysfsRoot, 'class/tty'))
      .filter((n) => /^tty(USB|ACM)\d+$/.test(n))
      .sort();
  } catch {
    return [];
  }
  return names.flatMap((n) => usbAdapterOf(`/dev/${n}`, sysfsRoot) ?? []);
}

/** The udev line naming one scanner's bridge `/dev/fingerprintN`: by serial number, else by USB port. */
export function fingerprintRule(a: UsbSerialAdapter, index: number): string {
  const by = a.serial ? `ATTRS{serial}=="${a.serial.replace(/["\\]/g, '')}"` : `KERNELS=="${a.usbPath}"`;
  return `SUBSYSTEM=="tty", ATTRS{idVendor}=="${a.vendor}", ATTRS{idProduct}=="${a.product}", ${by}, SYMLINK+="fingerprint${index}", GROUP="dialout", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"`;
}

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

/**
 * The udev rules with one line per iris camera model at the `@iris-rules@` marker and one line per
 * scanner's USB bridge (by serial number) at the `@fingerprint-rules@` marker.
 */
export function renderRules(
  template: string,
  group: string,
  irisUsb: readonly string[] = [],
  scanners: readonly UsbSerialAdapter[] = [],
): string {
  const lines = irisUsb.map((id) => {
    const m = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(id.trim());
    if (!m)
      throw new AgentError(
        'CLI_USAGE',
        `--iris-usb ${id} is not a USB id pair VVVV:PPPP`,
        { value: id },
        { hint: 'take the ids from "edge-agent devices" or lsusb, e.g. --iris-usb 1d6b:0104' },
      );
    return `SUBSYSTEM=="hidraw", ATTRS{idVendor}=="${m[1]!.toLowerCase()}", ATTRS{idProduct}=="${m[2]!.toLowerCase()}", SYMLINK+="iris%n", GROUP="${group}", MODE="0660"`;
  });
  const fingers = scanners.map((a, i) => fingerprintRule(a, i));
  return template
    .replace(/GROUP="edge-agent"/g, `GROUP="${group}"`)
    .replace(/^# @iris-rules@$/m, lines.length ? lines.join('\n') : '# @iris-rules@')
    .replace(/^# @fingerprint-rules@$/m, fingers.length ? fingers.join('\n') : '# @fingerprint-rules@');
}

export type InstallStep = ReleaseStep;

/**
 * The drop-in that gives the unit NotifyAccess=all where the unix-dgram addon does not load with
 * the unit's node (the package's postinst writes the same file, systemd/debian/postinst).
 */
export const NOTIFY_DROPIN = `etc/systemd/system/${UNIT_NAME}.d/notify-access.conf`;

/** Loads a package with `node` in a child, as the service would: null when it loads, else why not. */
export function loadError(node: string, pkgDir: string | null): string | null {
  if (!pkgDir) return 'the unix-dgram package is not installed';
  const script =
    'try { require(process.argv[1]) } catch (e) { console.log(String(e.message).split("\\nRequire stack")[0].replace(/\\s+/g, " ").slice(0, 240)); process.exit(1) }';
  const r = spawnSync(node, ['-e', script, pkgDir], { encoding: 'utf8', timeout: 60_000 });
  if (r.status === 0) return null;
  return r.stdout.trim() || r.stderr.trim().split('\n')[0] || r.error?.message || `${node} exited with ${r.status}`;
}

/** The unix-dgram package this code would load (a checkout's or an installed package's), or null. */
function ownUnixDgram(): string | null {
  try {
    return dirname(createRequire(import.meta.url).resolve('unix-dgram/package.json'));
  } catch {
    return null;
  }
}

/**
 * The unit says NotifyAccess=main: the agent sends its own notifications through the unix-dgram
 * addon. Where that addon (`pkgDir`) does not load with `node` (the unit's), the agent sends
 * through systemd-notify, a child, whose messages `main` drops, and the watchdog would restart it:
 * then the drop-in says NotifyAccess=all; where it loads, a drop-in left by an earlier install goes.
 */
export function notifyAccessStep(root: string, pkgDir: string | null, node: string, dryRun: boolean): InstallStep {
  const path = join(root, NOTIFY_DROPIN);
  const why = loadError(node, pkgDir);
  const act = dryRun ? 'would do' : 'done';
  if (why === null) {
    const detail = `NotifyAccess=main as the unit says: the unix-dgram addon loads with ${node}`;
    if (!existsSync(path)) return { action: 'keep NotifyAccess=main', status: 'skipped', detail };
    if (!dryRun) {
      rmSync(path, { force: true });
      try {
        rmdirSync(dirname(path)); // only when empty: a drop-in of the technician's stays
      } catch {
        // not empty
      }
    }
    return { action: 'remove NotifyAccess drop-in', path, status: act, detail };
  }
  const text = `# Written by edge-agent install-service: the unix-dgram addon${pkgDir ? ` ${pkgDir}` : ''} does not load
# with ${node} (${why}),
# so the agent sends its notifications through systemd-notify, a child process, whose messages
# NotifyAccess=main would drop. Removed when a release whose addon loads is installed.
[Service]
NotifyAccess=all
`;
  const detail = `NotifyAccess=all: the unix-dgram addon does not load with ${node} (${why}), so the agent sends through systemd-notify`;
  if (existsSync(path) && readFileSync(path, 'utf8') === text)
    return { action: 'write NotifyAccess drop-in', path, status: 'skipped', detail: `${detail} (already written)` };
  if (!dryRun) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomic(path, text, 0o644);
  }
  return { action: 'write NotifyAccess drop-in', path, status: act, detail };
}

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
