/**
 * The Debian package of a release folder: the release under /opt/edge-agent/releases/<version>,
 * the unit in /lib/systemd/system (ExecStart through /opt/edge-agent/current), the udev rules as a
 * conffile in /etc/udev/rules.d (a technician adds lines to it; dpkg keeps the edits), the command
 * /usr/bin/edge-agent (a script running the current release with the terminal's config), and the
 * maintainer scripts of systemd/debian/ with the version filled in (with its triggers file: postinst
 * checks again whether the release's unix-dgram addon loads when /usr/bin/node changes).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRelease } from '../../src/setup/releases.js';
import { commandScript, releaseExecStart } from '../../src/setup/service-files/daemon-command.js';
import { RULES_NAME, UNIT_NAME, renderUnit } from '../../src/setup/service-files/systemd-unit.js';
import { renderRules } from '../../src/setup/service-files/udev-rules.js';

/** Debian's names for the architectures. */
export const DEB_ARCH = { arm64: 'arm64', x64: 'amd64' } as const;
const SCRIPTS = ['preinst', 'postinst', 'prerm', 'postrm'];

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.error}`);
  return r.stdout;
}

export interface DebOptions {
  /** systemd/ of the checkout (unit, rules, debian/ templates). */
  systemdDir: string;
  /** dpkg-deb compression: `xz` (default) or `gzip`. */
  compression?: string;
  /**
   * Its level. Default 1: on the 80 MB arm64 release, xz -1 takes 15 s for 18 MB where xz -6
   * (dpkg-deb's default) takes 109 s for 15.7 MB, on the CI's two cores (gzip: 5 s, 22 MB).
   */
  level?: number;
}

/** Builds `edge-agent_<version>_<debarch>.deb` from `releaseDir` into `outDir`; returns its path. */
export function buildDeb(releaseDir: string, outDir: string, options: DebOptions): string {
  const info = readRelease(releaseDir);
  if (!info) throw new Error(`${releaseDir} is not a release folder`);
  const debArch = DEB_ARCH[info.arch as keyof typeof DEB_ARCH];
  if (!debArch) throw new Error(`no Debian architecture for ${info.arch}`);
  const root = join(outDir, `deb-${info.arch}`);
  rmSync(root, { recursive: true, force: true });

  const dest = join(root, 'opt/edge-agent/releases', info.version);
  mkdirSync(join(dest, '..'), { recursive: true });
  sh('cp', ['-al', releaseDir, dest]); // hard links: no second copy of node_modules on the build disk

  const unitDir = join(root, 'lib/systemd/system');
  mkdirSync(unitDir, { recursive: true });
  writeFileSync(
    join(unitDir, UNIT_NAME),
    renderUnit(readFileSync(join(options.systemdDir, UNIT_NAME), 'utf8'), releaseExecStart('/usr/bin/node')),
    { mode: 0o644 },
  );
  const rulesDir = join(root, 'etc/udev/rules.d');
  mkdirSync(rulesDir, { recursive: true });
  writeFileSync(join(rulesDir, RULES_NAME), renderRules(readFileSync(join(options.systemdDir, RULES_NAME), 'utf8'), 'edge-agent'), {
    mode: 0o644,
  });
  mkdirSync(join(root, 'usr/bin'), { recursive: true });
  writeFileSync(join(root, 'usr/bin/edge-agent'), commandScript('/usr/bin/node'), { mode: 0o755 });

  const control = join(root, 'DEBIAN');
  mkdirSync(control);
  const kb = sh('du', ['-sk', '--exclude=DEBIAN', root]).split(/\s/)[0]!;
  const fill = (text: string) =>
    text.replaceAll('@VERSION@', info.version).replaceAll('@DEB_ARCH@', debArch).replaceAll('@INSTALLED_SIZE@', kb);
  const templates = join(options.systemdDir, 'debian');
  for (const name of readdirSync(templates)) {
    writeFileSync(join(control, name), fill(readFileSync(join(templates, name), 'utf8')));
    chmodSync(join(control, name), SCRIPTS.includes(name) ? 0o755 : 0o644);
  }

  const deb = join(outDir, `edge-agent_${info.version}_${debArch}.deb`);
  sh('dpkg-deb', ['--root-owner-group', `-Z${options.compression ?? 'xz'}`, `-z${options.level ?? 1}`, '--build', root, deb]);
  rmSync(root, { recursive: true, force: true });
  return deb;
}
