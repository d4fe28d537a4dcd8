/**
 * The Debian package's maintainer scripts, on small releases built by the release builder's own
 * buildDeb, installed with the real dpkg into a scratch root (--root with chrootless scripts, as
 * .ci/deb-check.sh does with the real release): install, upgrade keeping the previous release,
 * rollback with the real CLI, remove and purge keeping config and data, purge-data removing them.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDeb } from '../../.ci/release/deb.js';
import { CHECKSUM_FILE, checksumText } from '../../src/setup/releases.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { has, needs } from '../helpers/system.js';

const PROGRAMS = ['dpkg', 'dpkg-deb', 'useradd', 'userdel', 'systemd-analyze'];

function release(version: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'deb-release-')), `edge-agent-${version}-linux-x64`);
  mkdirSync(join(dir, 'dist/src/cli'), { recursive: true });
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
  const r = spawnSync('dpkg', [`--root=${root}`, '--force-not-root', '--force-script-chrootless', '--force-depends', '--log=/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` } });
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  return `${r.stdout}${r.stderr}`;
}

const link = (root: string, name: string) => readlinkSync(join(root, 'opt/edge-agent', name));
const runs = (root: string) => readFileSync(join(root, 'opt/edge-agent/current/dist/src/cli/main.js'), 'utf8').match(/console\.log\("(.+)"\)/)![1];

// useradd and chown in the maintainer scripts need root, even into a scratch root.
const asRoot = process.getuid?.() === 0;
describe.skipIf(!has(...PROGRAMS) || !asRoot)(`the Debian package in a scratch root (${needs(...PROGRAMS)}, root)`, { timeout: 120_000 }, () => {
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
    expect(readFileSync(unit, 'utf8')).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/edge-agent\/current\/dist\/src\/cli\/main\.js run$/m);
    expect(readFileSync(join(root, 'etc/udev/rules.d/99-edge-agent.rules'), 'utf8')).toContain('SYMLINK+="fingerprint%n"');
    expect(readFileSync(join(root, 'var/lib/dpkg/info/edge-agent.conffiles'), 'utf8').trim()).toBe('/etc/udev/rules.d/99-edge-agent.rules');
    const user = readFileSync(join(root, 'etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith('edge-agent:'))!;
    expect(user).toMatch(/^edge-agent:x:\d+:\d+::\/var\/lib\/edge-agent:\/usr\/sbin\/nologin$/);
    expect(statSync(join(root, 'var/lib/edge-agent')).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'var/lib/edge-agent')).uid).toBe(Number(user.split(':')[2]));
    expect(existsSync(join(root, 'etc/edge-agent'))).toBe(true);
    expect(link(root, 'current')).toBe('releases/1.0.0');
    expect(readFileSync(join(root, 'usr/bin/edge-agent'), 'utf8')).toContain('exec /usr/bin/node /opt/edge-agent/current/dist/src/cli/main.js "$@"');

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
});
