import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_ENTRY, runCli, ROOT } from '../helpers/cli.js';
import { has, loads } from '../helpers/system.js';
import { installService } from '../../src/setup/service-files.js';
import { DAEMON_ENVIRONMENT, DAEMON_NODE_FLAGS, defaultExecStart } from '../../src/setup/service-files/daemon-command.js';
import { NOTIFY_DROPIN } from '../../src/setup/service-files/notify-access.js';
import { hiddenPaths, parseUnit, renderUnit } from '../../src/setup/service-files/systemd-unit.js';
import { listUsbSerialAdapters, renderRules, usbAdapterOf } from '../../src/setup/service-files/udev-rules.js';

const UNIT = join(ROOT, 'systemd/edge-agent.service');
const RULES = join(ROOT, 'systemd/99-edge-agent.rules');
const template = readFileSync(UNIT, 'utf8');

/**
 * `systemd-analyze verify` checks that ExecStart's binary exists. The shipped unit names
 * /usr/bin/node (Debian's node); where node lives elsewhere (CI images, nvm) we verify a copy
 * whose ExecStart names this node binary, changing nothing else.
 */
function unitCopy(execStart: string, notifyAccess?: 'main' | 'all'): string {
  const dir = mkdtempSync(join(tmpdir(), 'unit-'));
  const file = join(dir, 'edge-agent.service');
  writeFileSync(file, renderUnit(template, execStart, notifyAccess));
  return file;
}

function values(key: string): string[] {
  return (parseUnit(template).get('Service') ?? []).filter(([k]) => k === key).map(([, v]) => v);
}

describe.skipIf(!has('systemd-analyze'))('systemd unit under systemd-analyze (needs systemd-analyze)', () => {
  it('passes systemd-analyze verify, with NotifyAccess=main as shipped and =all as the drop-in sets it where the addon does not load', () => {
    for (const access of ['main', 'all'] as const) {
      const file = unitCopy(`${process.execPath} ${ROOT}dist/src/cli/main.js run`, access);
      const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
      expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
      expect(r.status).toBe(0);
    }
  });

  it('verify really checks: a unit whose binary does not exist fails', () => {
    const file = unitCopy('/nonexistent/node run');
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('/nonexistent/node');
  });

  it('has an exposure of at most 3.5 in systemd-analyze security --offline', () => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=true', UNIT], { encoding: 'utf8' });
    const m = r.stdout.match(/Overall exposure level for edge-agent\.service: (\d+(?:\.\d+)?)/);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    const exposure = Number(m![1]);
    expect(exposure).toBeLessThanOrEqual(3.5);
    expect(exposure).toBeGreaterThan(0);
  });

  it('the unit install-service writes for this checkout passes verify as it is (its ExecStart runs the sources through tsx)', () => {
    // install-service writes exactly this (its test below checks the rest against renderUnit).
    const file = unitCopy(defaultExecStart(CLI_ENTRY));
    const v = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    expect(v.status, v.stderr).toBe(0);
  });
});

describe('systemd unit', () => {
  it('is Type=notify with a watchdog, restarts always, runs as its own user with serial and HID access', () => {
    expect(values('Type')).toEqual(['notify']);
    expect(values('ExecStart')[0]).toMatch(new RegExp(`^/usr/bin/node ${DAEMON_NODE_FLAGS.join(' ')} /`));
    for (const [k, v] of Object.entries(DAEMON_ENVIRONMENT)) expect(values('Environment')).toContain(`${k}=${v}`);
    expect(values('NotifyAccess')).toEqual(['main']); // the agent sends its own datagrams
    expect(Number(values('WatchdogSec')[0])).toBeGreaterThan(0);
    expect(values('Restart')).toEqual(['always']);
    expect(values('User')).toEqual(['edge-agent']);
    expect(values('SupplementaryGroups')).toEqual(['dialout']);
    expect(values('StateDirectory')).toEqual(['edge-agent']);
    expect(values('UMask')).toEqual(['0077']);
    expect(values('DevicePolicy')).toEqual(['closed']);
    expect(values('DeviceAllow')).toEqual(expect.arrayContaining(['char-ttyUSB rw', 'char-ttyACM rw', 'char-hidraw rw']));
    expect(values('RestrictAddressFamilies')).toEqual(['AF_UNIX AF_INET AF_INET6 AF_NETLINK']);
    expect(values('MemoryDenyWriteExecute')).toEqual([]); // V8's JIT needs W+X pages
    expect(values('ProcSubset')).toEqual([]); // would hide /proc/sys/kernel/random/boot_id
    expect(values('LoadCredential')[0]).toMatch(/^secrets\.yaml:/);
    // It points at the configuration alone: the data folder is the config's, as for every command.
    // (and the daemon's memory settings, DAEMON_ENVIRONMENT, checked above).
    expect(values('Environment')).toEqual([
      'EDGE_AGENT_CONFIG=/etc/edge-agent/config.yaml',
      'EDGE_AGENT_SECRETS=%d/secrets.yaml',
      'NODE_ENV=production',
      ...Object.entries(DAEMON_ENVIRONMENT).map(([k, v]) => `${k}=${v}`),
    ]);
    for (const k of ['ProtectSystem', 'ProtectHome', 'NoNewPrivileges', 'PrivateTmp']) expect(values(k)).toHaveLength(1);
  });
});

function ruleLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

function expectWellFormed(lines: string[]): void {
  for (const line of lines) {
    for (const part of line.split(/,\s*/)) expect(part, line).toMatch(/^([A-Z_]+(\{[A-Za-z_]+\})?(==|!=|\+=|=)"[^"]*"|LABEL="[a-z_]+")$/);
  }
}

describe('udev rules', { timeout: 60_000 }, () => {
  it('name no USB bridge by its make alone (a CP2102 may be a Zigbee dongle), and cover the Pi UART (serial0, ttyS0, ttyAMA0)', () => {
    const lines = ruleLines(readFileSync(RULES, 'utf8'));
    expectWellFormed(lines);
    const text = lines.join('\n');
    expect(text).not.toMatch(/idVendor/); // bridges are named by serial number, by install-service --scanner-port
    expect(text).toContain(
      'SUBSYSTEM=="tty", KERNEL=="ttyS0|ttyAMA0", SYMLINK=="serial0", SYMLINK+="fingerprint-uart0", GROUP="dialout", MODE="0660"',
    );
    expect(text).toMatch(/KERNEL=="ttyS0\|ttyAMA0", GROUP="dialout", MODE="0660"$/m);
    expect(text).not.toContain('hidraw'); // no HID device gets access until its model is named
  });

  it('name a scanner bridge by its serial number, or by its USB port when it has none', () => {
    // a sysfs laid out as the kernel does: /sys/class/tty/ttyUSB0/device -> .../1-1.3/1-1.3:1.0/ttyUSB0
    const sys = mkdtempSync(join(tmpdir(), 'sysfs-'));
    const plug = (tty: string, usb: string, ids: Record<string, string>) => {
      const dev = join(sys, 'devices/platform/usb1', usb);
      mkdirSync(join(dev, `${usb}:1.0`, tty), { recursive: true });
      for (const [k, v] of Object.entries(ids)) writeFileSync(join(dev, k), `${v}\n`);
      mkdirSync(join(sys, 'class/tty', tty), { recursive: true });
      symlinkSync(join(dev, `${usb}:1.0`, tty), join(sys, 'class/tty', tty, 'device'));
    };
    plug('ttyUSB0', '1-1.3', { idVendor: '10C4', idProduct: 'ea60', serial: '0001' });
    plug('ttyUSB1', '1-1.4', { idVendor: '1a86', idProduct: '7523' });
    const cp = usbAdapterOf('/dev/ttyUSB0', sys)!;
    const ch = usbAdapterOf('/dev/ttyUSB1', sys)!;
    expect(cp).toEqual({ port: '/dev/ttyUSB0', kernel: 'ttyUSB0', vendor: '10c4', product: 'ea60', serial: '0001', usbPath: '1-1.3' });
    expect(ch.serial).toBeNull();
    expect(usbAdapterOf('/dev/ttyS0', sys)).toBeNull();
    expect(listUsbSerialAdapters(sys).map((a) => a.port)).toEqual(['/dev/ttyUSB0', '/dev/ttyUSB1']);
    const lines = ruleLines(renderRules(readFileSync(RULES, 'utf8'), 'edge-agent', [], [cp, ch]));
    expectWellFormed(lines);
    expect(lines).toContain(
      'SUBSYSTEM=="tty", ATTRS{idVendor}=="10c4", ATTRS{idProduct}=="ea60", ATTRS{serial}=="0001", SYMLINK+="fingerprint0", GROUP="dialout", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"',
    );
    expect(lines).toContain(
      'SUBSYSTEM=="tty", ATTRS{idVendor}=="1a86", ATTRS{idProduct}=="7523", KERNELS=="1-1.4", SYMLINK+="fingerprint1", GROUP="dialout", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"',
    );
    const steps = installService({
      prefix: mkdtempSync(join(tmpdir(), 'prefix-')),
      dryRun: true,
      user: 'edge-agent',
      execStart: defaultExecStart(CLI_ENTRY),
      scannerPorts: ['/dev/ttyUSB0', '/dev/ttyUSB9'],
      sysfsRoot: sys,
    });
    expect(steps.find((x) => x.action === 'name the scanner adapter')).toMatchObject({ path: '/dev/ttyUSB9', status: 'failed' });
    expect(steps.some((x) => x.action === 'write systemd unit')).toBe(false);
  });

  it('give a named iris camera model /dev/irisN and the agent group, through install-service --iris-usb', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'prefix-'));
    const r = await runCli(['install-service', '--prefix', prefix, '--iris-usb', '2B7C:0101', '--user', 'attend']);
    expect(r.code, r.stderr).toBe(0);
    const lines = ruleLines(readFileSync(join(prefix, 'etc/udev/rules.d/99-edge-agent.rules'), 'utf8'));
    expectWellFormed(lines);
    expect(lines).toContain(
      'SUBSYSTEM=="hidraw", ATTRS{idVendor}=="2b7c", ATTRS{idProduct}=="0101", SYMLINK+="iris%n", GROUP="attend", MODE="0660"',
    );
    const unit = readFileSync(join(prefix, 'etc/systemd/system/edge-agent.service'), 'utf8');
    expect(unit).toMatch(/^User=attend$/m);
    const bad = await runCli(['install-service', '--prefix', prefix, '--iris-usb', 'camera']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('VVVV:PPPP');
  });
});

describe('edge-agent install-service', { timeout: 60_000 }, () => {
  it('installs unit and rules under a prefix and prints what it did', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'prefix-'));
    const r = await runCli(['install-service', '--prefix', prefix, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { ok: boolean; steps: Array<{ action: string; path?: string; status: string; detail?: string }> };
    expect(out.ok).toBe(true);
    const unitPath = join(prefix, 'etc/systemd/system/edge-agent.service');
    const rulesPath = join(prefix, 'etc/udev/rules.d/99-edge-agent.rules');
    // NotifyAccess=main as shipped where the unix-dgram addon loads (the agent sends its own
    // datagrams); where it does not, a drop-in says NotifyAccess=all (systemd-notify sends).
    const addon = loads('unix-dgram');
    expect(out.steps.map((s) => [s.action, s.status])).toEqual([
      ['check Node version', 'done'],
      // A checkout under /tmp or /home (CI's, a contributor's) is reported, not refused, when staged under a prefix.
      ['check ExecStart is visible to the service', hiddenPaths(defaultExecStart(CLI_ENTRY)).length ? 'skipped' : 'done'],
      ['write systemd unit', 'done'],
      addon ? ['keep NotifyAccess=main', 'skipped'] : ['write NotifyAccess drop-in', 'done'],
      ['write udev rules', 'done'],
      ['create config folder', 'done'],
      ['create user', 'skipped'],
    ]);
    const unit = readFileSync(unitPath, 'utf8');
    // ExecStart names this node and the entry point the command ran from (the tests' build, or the
    // sources through tsx); the rest is the shipped unit.
    expect(unit).toContain(`ExecStart=${process.execPath} ${DAEMON_NODE_FLAGS.join(' ')} `);
    expect(unit).toMatch(CLI_ENTRY.endsWith('.ts') ? /--import \S+tsx\S* \S+src\/cli\/main\.ts run$/m : /\S+\/src\/cli\/main\.js run$/m);
    expect(unit).toContain(`ExecStart=${defaultExecStart(CLI_ENTRY)}`);
    expect(unit.replace(/^ExecStart=.*$/m, '')).toBe(template.replace(/^ExecStart=.*$/m, ''));
    expect(out.steps[3]!.detail).toContain(addon ? `the unix-dgram addon loads with ${process.execPath}` : 'NotifyAccess=all');
    expect(existsSync(join(prefix, NOTIFY_DROPIN))).toBe(!addon);
    expect(readFileSync(rulesPath, 'utf8')).toBe(readFileSync(RULES, 'utf8'));
    expect(statSync(join(prefix, 'etc/edge-agent')).isDirectory()).toBe(true);

    const text = await runCli(['install-service', '--prefix', prefix]);
    expect(text.stdout).toContain(`done      write systemd unit ${unitPath}`);
    expect(text.stdout).toContain('useradd --system');
  });

  it("refuses, writing nothing, an ExecStart the unit's sandbox hides (ProtectHome, PrivateTmp) or a Node older than 20", async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'prefix-'));
    const oldNode = join(mkdtempSync(join(tmpdir(), 'node18-')), 'node');
    writeFileSync(oldNode, '#!/bin/sh\necho v18.19.1\n', { mode: 0o755 });
    // On this machine (no --prefix: a prefix stages another root, whose paths cannot be checked here), as a dry run.
    const r = await runCli(['install-service', '--dry-run', '--exec-start', `${oldNode} /home/pi/edge-agent/dist/src/cli/main.js run`]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`failed    check Node version\n          ${oldNode} is Node v18.19.1; edge-agent needs Node 20 or newer`);
    expect(r.stdout).toMatch(
      /failed {4}check ExecStart is visible to the service\n {10}the unit runs with ProtectHome=yes and PrivateTmp=yes, .*could not start .*node18-.*\/node, \/home\/pi\/edge-agent\/dist\/src\/cli\/main\.js\. Install the release under \/opt\/edge-agent/,
    );
    expect(r.stdout).toContain('refused: nothing written');
    // Staged into another root, the hidden paths are said, not refused (they are the target's).
    const staged = await runCli([
      'install-service',
      '--prefix',
      prefix,
      '--dry-run',
      '--exec-start',
      `${process.execPath} /home/pi/edge-agent/dist/src/cli/main.js run`,
    ]);
    expect(staged.code, staged.stdout).toBe(0);
    expect(staged.stdout).toContain(
      `skipped   check ExecStart is visible to the service\n          staged under ${prefix}: on this machine /home/pi/edge-agent/dist/src/cli/main.js would be hidden`,
    );
    expect(existsSync(join(prefix, 'etc'))).toBe(false);
    expect(hiddenPaths('/usr/bin/node /opt/edge-agent/current/dist/src/cli/main.js run')).toEqual([]);
    expect(hiddenPaths('/root/.nvm/versions/node/v20.1.0/bin/node /opt/x run')).toEqual(['/root/.nvm/versions/node/v20.1.0/bin/node']);
    expect(hiddenPaths('/usr/bin/node /var/tmp/a.js')).toEqual(['/var/tmp/a.js']);
  });

  it('changes nothing with --dry-run', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'prefix-'));
    const r = await runCli(['install-service', '--prefix', prefix, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('would do  write systemd unit');
    expect(existsSync(join(prefix, 'etc'))).toBe(false);
  });
});
