/**
 * The Debian package's maintainer scripts, on small releases built by the release builder's own
 * buildDeb, installed with the real dpkg into a scratch root (--root with chrootless scripts, as
 * .ci/deb-check.sh does with the real release): install, upgrade keeping the previous release,
 * rollback with the real CLI, remove and purge keeping config and data, purge-data removing them,
 * and the NotifyAccess=all drop-in postinst writes where the release's unix-dgram addon does not
 * load with the installed node (and removes once it loads), also when /usr/bin/node changes.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDeb } from '../../.ci/release/deb.js';
import { CHECKSUM_FILE, checksumText } from '../../src/setup/releases.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { has, loads, needs } from '../helpers/system.js';

const PROGRAMS = ['dpkg', 'dpkg-deb', 'useradd', 'userdel', 'systemd-analyze'];

/**
 * A small release. `addon`: `built` carries the checkout's unix-dgram (built for this machine and
 * this Node, with what it requires), `unbuilt` the package without its binary (what the release
 * builder of issue 17 shipped), `none` no node_modules at all.
 */
function release(version: string, addon: 'none' | 'unbuilt' | 'built' = 'none'): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'deb-release-')), `edge-agent-${version}-linux-x64`);
  mkdirSync(join(dir, 'dist/src/cli'), { recursive: true });
  if (addon !== 'none') {
    for (const pkg of ['unix-dgram', 'bindings', 'file-uri-to-path'])
      cpSync(join(ROOT, 'node_modules', pkg), join(dir, 'node_modules', pkg), { recursive: true });
    if (addon === 'unbuilt') rmSync(join(dir, 'node_modules/unix-dgram/build'), { recursive: true, force: true });
  }
  writeFileSync(join(dir, 'dist/src/cli/main.js'), `#!/usr/bin/env node\nconsole.log(${JSON.stringify(version)});\n`);
  chmodSync(join(dir, 'dist/src/cli/main.js'), 0o755);
  writeFileSync(join(dir, 'release.json'), JSON.stringify({ name: 'edge-agent', version, arch: 'x64' }));
  writeFileSync(join(dir, CHECKSUM_FILE), checksumText(dir));
  return dir;
}

function scratchRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'debroot-'));
  mkdirSync(join(root, 'var/lib/dpkg/info'), { recursive: true });
  mkdirSync(join(root, 'var/lib/dpkg/updates'), { recursive: true });
  mkdirSync(join(root, 'etc'));
  writeFileSync(join(root, 'var/lib/dpkg/status'), '');
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\ndialout:x:20:\n');
  writeFileSync(join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o600 });
  writeFileSync(join(root, 'etc/gshadow'), 'root:*::\ndialout:*::\n', { mode: 0o600 });
  return root;
}

function dpkg(root: string, ...args: string[]): string {
  // This node first on the PATH: into a root without one, postinst checks the addon with it.
  const PATH = `${dirname(process.execPath)}:${process.env.PATH}:/usr/sbin:/sbin`;
  const r = spawnSync(
    'dpkg',
    [`--root=${root}`, '--force-not-root', '--force-script-chrootless', '--force-depends', '--log=/dev/null', ...args],
    { encoding: 'utf8', env: { ...process.env, PATH } },
  );
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  return `${r.stdout}${r.stderr}`;
}

const link = (root: string, name: string) => readlinkSync(join(root, 'opt/edge-agent', name));
const runs = (root: string) =>
  readFileSync(join(root, 'opt/edge-agent/current/dist/src/cli/main.js'), 'utf8').match(/console\.log\("(.+)"\)/)![1];

// useradd and chown in the maintainer scripts need root, even into a scratch root.
const asRoot = process.getuid?.() === 0;
describe.skipIf(!has(...PROGRAMS) || !asRoot)(
  `the Debian package in a scratch root (${needs(...PROGRAMS)}, root)`,
  { timeout: 120_000 },
  () => {
    let deb1: string;
    let deb2: string;
    beforeAll(() => {
      const out = mkdtempSync(join(tmpdir(), 'debs-'));
      const systemdDir = join(ROOT, 'systemd');
      deb1 = buildDeb(release('1.0.0'), out, { systemdDir, compression: 'gzip' });
      deb2 = buildDeb(release('1.1.0'), out, { systemdDir, compression: 'gzip' });
    });

    it('installs unit, rules, user and folders; the unit passes systemd-analyze verify', () => {
      expect(deb1).toMatch(/edge-agent_1\.0\.0_amd64\.deb$/);
      const fields = spawnSync('dpkg-deb', ['-f', deb1, 'Depends'], { encoding: 'utf8' }).stdout;
      expect(fields).toContain('nodejs (>= 20)');
      expect(fields).toContain('libusb-1.0-0');
      expect(fields).toContain('libudev1');

      const root = scratchRoot();
      const said = dpkg(root, '-i', deb1);
      expect(said).toContain('created the system user edge-agent');
      const unit = join(root, 'lib/systemd/system/edge-agent.service');
      expect(readFileSync(unit, 'utf8')).toMatch(
        /^ExecStart=\/usr\/bin\/node --max-semi-space-size=4 --heap-growing-percent=20 \/opt\/edge-agent\/current\/dist\/src\/cli\/main\.js run$/m,
      );
      expect(readFileSync(join(root, 'etc/udev/rules.d/99-edge-agent.rules'), 'utf8')).toContain('SYMLINK+="fingerprint-uart0"');
      expect(readFileSync(join(root, 'var/lib/dpkg/info/edge-agent.conffiles'), 'utf8').trim()).toBe(
        '/etc/udev/rules.d/99-edge-agent.rules',
      );
      const user = readFileSync(join(root, 'etc/passwd'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('edge-agent:'))!;
      expect(user).toMatch(/^edge-agent:x:\d+:\d+::\/var\/lib\/edge-agent:\/usr\/sbin\/nologin$/);
      expect(statSync(join(root, 'var/lib/edge-agent')).mode & 0o777).toBe(0o700);
      expect(statSync(join(root, 'var/lib/edge-agent')).uid).toBe(Number(user.split(':')[2]));
      expect(existsSync(join(root, 'etc/edge-agent'))).toBe(true);
      expect(link(root, 'current')).toBe('releases/1.0.0');
      expect(readFileSync(join(root, 'usr/bin/edge-agent'), 'utf8')).toContain(
        'exec /usr/bin/node /opt/edge-agent/current/dist/src/cli/main.js "$@"',
      );

      // As systemd would load it; ExecStart's binary must exist, so the check uses this machine's node.
      const text = readFileSync(unit, 'utf8').replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `);
      writeFileSync(unit, text);
      const verify = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
      expect(`${verify.stdout}${verify.stderr}`.trim()).toBe('');
      expect(verify.status).toBe(0);
    });

    it('keeps the previous release on upgrade; rollback goes back; remove and purge keep config and data', async () => {
      const root = scratchRoot();
      dpkg(root, '-i', deb1);
      writeFileSync(join(root, 'etc/edge-agent/config.yaml'), 'terminal: {id: gate-1}\n');
      writeFileSync(join(root, 'var/lib/edge-agent/agent.db'), 'punches');
      const rules = join(root, 'etc/udev/rules.d/99-edge-agent.rules');
      writeFileSync(rules, `${readFileSync(rules, 'utf8')}# a technician's line\n`);

      const said = dpkg(root, '--force-confold', '-i', deb2);
      expect(said).toContain('1.1.0 is current, 1.0.0 is kept');
      expect([link(root, 'current'), link(root, 'previous')]).toEqual(['releases/1.1.0', 'releases/1.0.0']);
      expect(runs(root)).toBe('1.1.0');
      // dpkg removed the files of 1.0.0; preinst's hard-link copy brought them back, checksums and all.
      expect(spawnSync('sha256sum', ['-c', '--quiet', CHECKSUM_FILE], { cwd: join(root, 'opt/edge-agent/releases/1.0.0') }).status).toBe(0);
      expect(readFileSync(rules, 'utf8')).toContain("# a technician's line");

      const back = await runCli(['rollback', '--prefix', root]);
      expect(back.code, back.stderr).toBe(0);
      expect(runs(root)).toBe('1.0.0');

      // Upgrading again after a rollback: what ran (1.0.0) is the one kept.
      dpkg(root, '-i', deb2);
      expect([link(root, 'current'), link(root, 'previous')]).toEqual(['releases/1.1.0', 'releases/1.0.0']);

      dpkg(root, '-r', 'edge-agent');
      expect(existsSync(join(root, 'opt/edge-agent'))).toBe(false);
      expect(existsSync(join(root, 'usr/bin/edge-agent'))).toBe(false);
      expect(readFileSync(join(root, 'etc/edge-agent/config.yaml'), 'utf8')).toContain('gate-1');
      expect(readFileSync(join(root, 'var/lib/edge-agent/agent.db'), 'utf8')).toBe('punches');

      const purged = dpkg(root, '--purge', 'edge-agent');
      expect(purged).toContain('kept /etc/edge-agent');
      expect(existsSync(rules)).toBe(false);
      expect(readFileSync(join(root, 'var/lib/edge-agent/agent.db'), 'utf8')).toBe('punches');
      expect(readFileSync(join(root, 'etc/passwd'), 'utf8')).toMatch(/^edge-agent:/m);
    });

    it('purge removes config, data and the user when /etc/edge-agent/purge-data exists', () => {
      const root = scratchRoot();
      dpkg(root, '-i', deb1);
      writeFileSync(join(root, 'var/lib/edge-agent/agent.db'), 'punches');
      writeFileSync(join(root, 'etc/edge-agent/purge-data'), '');
      expect(dpkg(root, '--purge', 'edge-agent')).toContain('purged: /etc/edge-agent, /var/lib/edge-agent');
      expect(existsSync(join(root, 'var/lib/edge-agent'))).toBe(false);
      expect(existsSync(join(root, 'etc/edge-agent'))).toBe(false);
      expect(readFileSync(join(root, 'etc/passwd'), 'utf8')).not.toMatch(/^edge-agent:/m);
    });

    describe.skipIf(!loads('unix-dgram'))('NotifyAccess follows the unix-dgram addon (needs the unix-dgram addon)', () => {
      const DROPIN = 'etc/systemd/system/edge-agent.service.d/notify-access.conf';
      let unbuilt: string;
      let built: string;
      beforeAll(() => {
        const out = mkdtempSync(join(tmpdir(), 'debs-'));
        const systemdDir = join(ROOT, 'systemd');
        unbuilt = buildDeb(release('2.0.0', 'unbuilt'), out, { systemdDir, compression: 'gzip' });
        built = buildDeb(release('2.1.0', 'built'), out, { systemdDir, compression: 'gzip' });
      });

      /** A package built from `files` (path below the root: [text, mode]) and a control file. */
      function stubDeb(control: string, files: Record<string, [string, number]> = {}): string {
        const dir = mkdtempSync(join(tmpdir(), 'stub-deb-'));
        mkdirSync(join(dir, 'DEBIAN'));
        writeFileSync(
          join(dir, 'DEBIAN/control'),
          `${control}Architecture: all\nMaintainer: edge-agent tests <tests@example.invalid>\nDescription: a stand-in for the tests\n`,
        );
        for (const [path, [text, mode]] of Object.entries(files)) {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), text, { mode });
        }
        const deb = `${dir}.deb`;
        const r = spawnSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', dir, deb], { encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
        return deb;
      }

      /** A nodejs package whose /usr/bin/node is this node, with native addons turned off or not. */
      const nodejs = (version: string, flags: string) =>
        stubDeb(`Package: nodejs\nVersion: ${version}\n`, {
          'usr/bin/node': [`#!/bin/sh\nexec ${process.execPath} ${flags}"$@"\n`, 0o755],
        });

      it('writes NotifyAccess=all where the addon does not load, removes it on an upgrade where it loads, follows a rollback, and goes with the package', async () => {
        const root = scratchRoot();
        const said = dpkg(root, '-i', unbuilt);
        expect(said).toMatch(
          /the unix-dgram addon does not load with \S*node \(Could not locate the bindings file[^)]*\): \/etc\/systemd\/system\/edge-agent\.service\.d\/notify-access\.conf says NotifyAccess=all/,
        );
        const dropin = readFileSync(join(root, DROPIN), 'utf8');
        expect(dropin).toMatch(/^\[Service\]\nNotifyAccess=all\n$/m);
        expect(dropin).toContain('Could not locate the bindings file');

        // systemd reads the unit with its drop-in (the folder beside the unit file) without a word.
        const dir = mkdtempSync(join(tmpdir(), 'unit-'));
        writeFileSync(
          join(dir, 'edge-agent.service'),
          readFileSync(join(root, 'lib/systemd/system/edge-agent.service'), 'utf8').replace(
            /^ExecStart=\/usr\/bin\/node /m,
            `ExecStart=${process.execPath} `,
          ),
        );
        cpSync(join(root, 'etc/systemd/system/edge-agent.service.d'), join(dir, 'edge-agent.service.d'), { recursive: true });
        const verify = spawnSync('systemd-analyze', ['verify', join(dir, 'edge-agent.service')], { encoding: 'utf8' });
        expect(`${verify.stdout}${verify.stderr}`.trim()).toBe('');
        expect(verify.status).toBe(0);

        const upgraded = dpkg(root, '-i', built);
        expect(upgraded).toMatch(/the unix-dgram addon loads with \S*node: NotifyAccess=main, as the unit says/);
        expect(upgraded).toContain(`removed /${DROPIN}`);
        expect(existsSync(join(root, 'etc/systemd/system/edge-agent.service.d'))).toBe(false);

        // Back to the release without it: the drop-in again. A drop-in of the technician's stays.
        const back = await runCli(['rollback', '--prefix', root]);
        expect(back.code, back.stderr).toBe(0);
        expect(back.stdout).toContain(`write NotifyAccess drop-in ${join(root, DROPIN)}`);
        expect(readFileSync(join(root, DROPIN), 'utf8')).toContain('NotifyAccess=all');
        writeFileSync(join(root, 'etc/systemd/system/edge-agent.service.d/override.conf'), '[Service]\nRestartSec=5\n');
        dpkg(root, '-r', 'edge-agent');
        expect(existsSync(join(root, DROPIN))).toBe(false);
        expect(existsSync(join(root, 'etc/systemd/system/edge-agent.service.d/override.conf'))).toBe(true);
      });

      it('checks again when /usr/bin/node changes: a Node the addon does not load in gets the drop-in, one it loads in loses it', () => {
        const root = scratchRoot();
        // The package's dependencies are there (dpkg leaves triggers of a package with missing
        // dependencies unprocessed, as a cycle): stand-ins for the libraries, and nodejs.
        dpkg(root, '-i', stubDeb('Package: pi-libraries\nVersion: 1\nProvides: libusb-1.0-0, libudev1, passwd\n'));
        dpkg(root, '-i', nodejs('20.0.0', ''));
        expect(dpkg(root, '-i', built)).toContain('the unix-dgram addon loads with /usr/bin/node: NotifyAccess=main, as the unit says');
        expect(existsSync(join(root, DROPIN))).toBe(false);

        // nodejs upgraded to a Node the addon does not load in (as one of another ABI). dpkg runs
        // the trigger at the end of the install (or apt, with the triggers left pending, after it).
        const upgrade = (deb: string) => dpkg(root, '-i', deb) + dpkg(root, '--triggers-only', '--pending');
        expect(upgrade(nodejs('20.0.1', '--no-addons '))).toMatch(
          /does not load with \/usr\/bin\/node \(Cannot load native addon because loading addons is disabled[^)]*\): \/etc\/systemd\/system\/edge-agent\.service\.d\/notify-access\.conf says NotifyAccess=all/,
        );
        expect(readFileSync(join(root, DROPIN), 'utf8')).toContain('NotifyAccess=all');

        expect(upgrade(nodejs('20.0.2', ''))).toContain(`removed /${DROPIN}`);
        expect(existsSync(join(root, DROPIN))).toBe(false);
      });
    });
  },
);
