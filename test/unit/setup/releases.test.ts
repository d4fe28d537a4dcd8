import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKSUM_FILE, checksumText, installRelease, releaseLinks, rollbackRelease, verifyRelease } from '../../../src/setup/releases.js';
import { installService } from '../../../src/setup/service-files.js';
import { NOTIFY_DROPIN } from '../../../src/setup/service-files/notify-access.js';
import { ROOT } from '../../helpers/cli.js';
import { loads } from '../../helpers/system.js';

/**
 * A small release folder as `npm run release` lays it out, with its SHA256SUMS; with `addon`, the
 * checkout's unix-dgram (built for this machine) and what it requires.
 */
function fakeRelease(version: string, addon = false): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'release-')), `edge-agent-${version}`);
  mkdirSync(join(dir, 'dist/src/cli'), { recursive: true });
  if (addon)
    for (const pkg of ['unix-dgram', 'bindings', 'file-uri-to-path'])
      cpSync(join(ROOT, 'node_modules', pkg), join(dir, 'node_modules', pkg), { recursive: true });
  writeFileSync(join(dir, 'dist/src/cli/main.js'), `#!/usr/bin/env node\nconsole.log(${JSON.stringify(version)});\n`, { mode: 0o755 });
  writeFileSync(join(dir, 'release.json'), JSON.stringify({ name: 'edge-agent', version, arch: 'arm64' }));
  writeFileSync(join(dir, CHECKSUM_FILE), checksumText(dir));
  return dir;
}

describe('releases side by side', () => {
  it('keeps the previous release on each install, rolls back and forward, and keeps two', () => {
    const root = mkdtempSync(join(tmpdir(), 'root-'));
    installRelease(fakeRelease('1.0.0'), root, false);
    expect(releaseLinks(root)).toMatchObject({ current: '1.0.0', previous: null, installed: ['1.0.0'] });
    expect(() => rollbackRelease(root, false)).toThrow(expect.objectContaining({ code: 'SETUP_NO_PREVIOUS_RELEASE' }));

    const steps = installRelease(fakeRelease('1.1.0'), root, false);
    expect(steps.map((s) => s.action)).toEqual(['check release', 'copy release', 'make it current']);
    expect(releaseLinks(root)).toMatchObject({ current: '1.1.0', previous: '1.0.0', installed: ['1.0.0', '1.1.0'] });
    const home = join(root, 'opt/edge-agent');
    expect(readlinkSync(join(home, 'current'))).toBe('releases/1.1.0'); // relative: the tree can be moved
    expect(readFileSync(join(home, 'current/dist/src/cli/main.js'), 'utf8')).toContain('1.1.0');

    expect(rollbackRelease(root, false)).toMatchObject({ from: '1.1.0', to: '1.0.0' });
    expect(readFileSync(join(home, 'current/dist/src/cli/main.js'), 'utf8')).toContain('1.0.0');
    expect(rollbackRelease(root, false)).toMatchObject({ from: '1.0.0', to: '1.1.0' });

    installRelease(fakeRelease('1.2.0'), root, false);
    expect(releaseLinks(root)).toMatchObject({ current: '1.2.0', previous: '1.1.0', installed: ['1.1.0', '1.2.0'] });
    expect(existsSync(join(home, 'releases/1.0.0'))).toBe(false);
  });

  it('changes nothing on a dry run', () => {
    const root = mkdtempSync(join(tmpdir(), 'root-'));
    const steps = installRelease(fakeRelease('2.0.0'), root, true);
    expect(steps.every((s) => s.status !== 'done' || s.action === 'check release')).toBe(true);
    expect(releaseLinks(root)).toMatchObject({ current: null, installed: [] });
  });

  it('refuses a damaged release, naming the file, and a rollback where nothing is installed', () => {
    const dir = fakeRelease('3.0.0');
    expect(verifyRelease(dir)).toBe(2);
    writeFileSync(join(dir, 'dist/src/cli/main.js'), 'truncated');
    const root = mkdtempSync(join(tmpdir(), 'root-'));
    expect(() => installRelease(dir, root, false)).toThrow(
      expect.objectContaining({ code: 'SETUP_RELEASE_DAMAGED', message: expect.stringContaining('dist/src/cli/main.js') }),
    );
    expect(releaseLinks(root).installed).toEqual([]);
    expect(() => rollbackRelease(root, false)).toThrow(expect.objectContaining({ code: 'SETUP_NOT_INSTALLED' }));
  });

  it('install-service from a release installs it, writes the command and runs "current" from the unit', () => {
    const root = mkdtempSync(join(tmpdir(), 'root-'));
    const steps = installService({
      prefix: root,
      dryRun: false,
      user: 'edge-agent',
      execStart: '/usr/bin/node /opt/edge-agent/current/dist/src/cli/main.js run',
      release: fakeRelease('4.0.0'),
    });
    expect(steps.filter((s) => s.status === 'failed')).toEqual([]);
    expect(releaseLinks(root).current).toBe('4.0.0');
    const command = join(root, 'usr/local/bin/edge-agent');
    expect(statSync(command).mode & 0o777).toBe(0o755);
    expect(readFileSync(command, 'utf8')).toContain(`exec ${process.execPath} /opt/edge-agent/current/dist/src/cli/main.js "$@"`);
    expect(readFileSync(join(root, 'etc/systemd/system/edge-agent.service'), 'utf8')).toMatch(
      /^ExecStart=\/usr\/bin\/node \/opt\/edge-agent\/current\/dist\/src\/cli\/main\.js run$/m,
    );
  });

  it.skipIf(!loads('unix-dgram'))(
    "install-service from a release writes NotifyAccess=all where its unix-dgram addon does not load with the unit's node, and removes it where it does (needs the unix-dgram addon)",
    () => {
      const root = mkdtempSync(join(tmpdir(), 'root-'));
      const execStart = `${process.execPath} /opt/edge-agent/current/dist/src/cli/main.js run`;
      const dropin = join(root, NOTIFY_DROPIN);
      const without = installService({ prefix: root, dryRun: false, user: 'edge-agent', execStart, release: fakeRelease('6.0.0') });
      expect(without.find((s) => s.action === 'write NotifyAccess drop-in')).toMatchObject({
        status: 'done',
        path: dropin,
        detail: expect.stringContaining(
          `does not load with ${process.execPath} (Cannot find module '${join(root, 'opt/edge-agent/releases/6.0.0/node_modules/unix-dgram')}'`,
        ),
      });
      expect(readFileSync(dropin, 'utf8')).toMatch(/^\[Service\]\nNotifyAccess=all\n$/m);
      // The unit stays as shipped.
      expect(readFileSync(join(root, 'etc/systemd/system/edge-agent.service'), 'utf8')).toMatch(/^NotifyAccess=main$/m);

      // An upgrade to a release whose addon loads: the drop-in goes (a drop-in of the technician's stays).
      writeFileSync(join(root, 'etc/systemd/system/edge-agent.service.d/override.conf'), '[Service]\nRestartSec=5\n');
      const withIt = installService({ prefix: root, dryRun: false, user: 'edge-agent', execStart, release: fakeRelease('6.1.0', true) });
      expect(withIt.find((s) => s.path === dropin)).toMatchObject({
        action: 'remove NotifyAccess drop-in',
        status: 'done',
        detail: expect.stringContaining(`loads with ${process.execPath}`),
      });
      expect(existsSync(dropin)).toBe(false);
      expect(existsSync(join(root, 'etc/systemd/system/edge-agent.service.d/override.conf'))).toBe(true);

      // The same release with a node that loads no addon (as a Node of another ABI would): back again.
      const wrapper = join(root, 'node-without-addons');
      writeFileSync(wrapper, `#!/bin/sh\nexec ${process.execPath} --no-addons "$@"\n`, { mode: 0o755 });
      const other = installService({
        prefix: root,
        dryRun: true,
        user: 'edge-agent',
        execStart: `${wrapper} /opt/edge-agent/current/dist/src/cli/main.js run`,
        release: join(root, 'opt/edge-agent/releases/6.1.0'),
      });
      expect(other.find((s) => s.path === dropin)).toMatchObject({
        action: 'write NotifyAccess drop-in',
        status: 'would do',
        detail: expect.stringContaining('loading addons is disabled'),
      });
      expect(existsSync(dropin)).toBe(false);
    },
  );

  it("install-service run from the package's release leaves the release and the unit to the package", () => {
    const root = mkdtempSync(join(tmpdir(), 'root-'));
    installRelease(fakeRelease('5.0.0'), root, false);
    mkdirSync(join(root, 'lib/systemd/system'), { recursive: true });
    writeFileSync(join(root, 'lib/systemd/system/edge-agent.service'), '[Service]\nExecStart=/usr/bin/node x run\n');
    const steps = installService({
      prefix: root,
      dryRun: false,
      user: 'edge-agent',
      execStart: '/usr/bin/node x run',
      irisUsb: ['2b7c:0101'],
      release: join(root, 'opt/edge-agent/releases/5.0.0'),
    });
    expect(steps.find((s) => s.action === 'install release')).toMatchObject({ status: 'skipped' });
    expect(existsSync(join(root, 'usr/local/bin/edge-agent'))).toBe(false);
    expect(steps.find((s) => s.action === 'write systemd unit')).toMatchObject({ status: 'skipped' });
    expect(existsSync(join(root, 'etc/systemd/system/edge-agent.service'))).toBe(false);
    expect(readFileSync(join(root, 'etc/udev/rules.d/99-edge-agent.rules'), 'utf8')).toContain('ATTRS{idVendor}=="2b7c"');
  });
});
