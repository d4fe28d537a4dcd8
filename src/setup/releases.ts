/**
 * Installed releases side by side, so a terminal can go back: each release is a folder
 * `/opt/edge-agent/releases/<version>` (a release tarball unpacked: dist/, node_modules/, models/,
 * systemd/, release.json, SHA256SUMS), `current` points at the one that runs (the unit's ExecStart
 * and /usr/bin/edge-agent go through it) and `previous` at the one before. Installing a release
 * moves `current` to `previous`; `edge-agent rollback` swaps the two. Older releases are removed,
 * so two stay on the SD card.
 *
 * The Debian package's maintainer scripts keep the same layout (systemd/debian/postinst); a release
 * tarball gets there through `edge-agent install-service` run from the unpacked folder.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '../core/errors.js';

/** Where releases live, below the installation root. */
export const RELEASES_HOME = 'opt/edge-agent';
/** What a release folder says about itself (written by `npm run release`). */
export const RELEASE_FILE = 'release.json';
export const CHECKSUM_FILE = 'SHA256SUMS';

export interface ReleaseInfo {
  name: 'edge-agent';
  version: string;
  /** `arm64` or `x64`: the architecture of the native modules in its node_modules. */
  arch: string;
  /** The git commit it was built from, when known. */
  commit?: string;
}

export interface ReleaseLinks {
  /** `<root>/opt/edge-agent`. */
  home: string;
  current: string | null;
  previous: string | null;
  /** Every release folder present, by version. */
  installed: string[];
}

export interface ReleaseStep {
  action: string;
  path?: string;
  status: 'done' | 'would do' | 'skipped' | 'failed';
  detail?: string;
}

/** The release.json of `dir`, or null when `dir` is not a release (a checkout, say). */
export function readRelease(dir: string): ReleaseInfo | null {
  try {
    const info = JSON.parse(readFileSync(join(dir, RELEASE_FILE), 'utf8')) as Partial<ReleaseInfo>;
    return info.name === 'edge-agent' && typeof info.version === 'string' && typeof info.arch === 'string' ? (info as ReleaseInfo) : null;
  } catch {
    return null;
  }
}

/** The release folder this code runs from (dist/src/setup is three levels below it), or null. */
export function runningReleaseDir(moduleUrl = import.meta.url): string | null {
  const dir = resolve(dirname(fileURLToPath(moduleUrl)), '../../..');
  return readRelease(dir) ? dir : null;
}

function linkTarget(link: string): string | null {
  try {
    return readlinkSync(link).replace(/\/+$/, '').split('/').pop() ?? null;
  } catch {
    return null;
  }
}

export function releaseLinks(root: string): ReleaseLinks {
  const home = join(resolve(root), RELEASES_HOME);
  let installed: string[] = [];
  try {
    installed = readdirSync(join(home, 'releases'))
      .filter((v) => !v.startsWith('.'))
      .sort();
  } catch {
    // nothing installed yet
  }
  return { home, current: linkTarget(join(home, 'current')), previous: linkTarget(join(home, 'previous')), installed };
}

/** Points `<home>/<name>` at `releases/<version>`, replacing the link in one rename. */
function pointLink(home: string, name: 'current' | 'previous', version: string | null): void {
  const link = join(home, name);
  if (version === null) {
    rmSync(link, { force: true });
    return;
  }
  const tmp = join(home, `.${name}.${process.pid}`);
  rmSync(tmp, { force: true });
  symlinkSync(`releases/${version}`, tmp);
  renameSync(tmp, link);
}

/** Every regular file below `dir` (symlinks are not followed), as sorted relative paths. */
function filesBelow(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesBelow(path, base));
    else if (entry.isFile()) out.push(relative(base, path));
  }
  return out.sort();
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The SHA256SUMS text of a release folder (`sha256sum -c SHA256SUMS` checks it). */
export function checksumText(dir: string): string {
  return filesBelow(dir)
    .filter((f) => f !== CHECKSUM_FILE)
    .map((f) => `${sha256(join(dir, f))}  ${f}\n`)
    .join('');
}

/** Checks every file SHA256SUMS lists; returns how many, or throws naming what differs. */
export function verifyRelease(dir: string): number {
  let text: string;
  try {
    text = readFileSync(join(dir, CHECKSUM_FILE), 'utf8');
  } catch {
    throw new AgentError('SETUP_RELEASE_DAMAGED', `${dir} has no ${CHECKSUM_FILE}`, { dir });
  }
  const bad: string[] = [];
  let n = 0;
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) continue;
    n++;
    const file = join(dir, m[2]!);
    if (!existsSync(file) || sha256(file) !== m[1]) bad.push(m[2]!);
  }
  if (bad.length)
    throw new AgentError(
      'SETUP_RELEASE_DAMAGED',
      `${bad.length} file(s) of ${dir} differ from ${CHECKSUM_FILE}: ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', ...' : ''}`,
      { dir, files: bad.slice(0, 20) },
    );
  return n;
}

/**
 * Copies the release folder `from` into `<root>/opt/edge-agent/releases/<version>` (after checking
 * its SHA256SUMS), makes it `current` and what was current `previous`, and removes older releases.
 */
export function installRelease(from: string, root: string, dryRun: boolean): ReleaseStep[] {
  const info = readRelease(from);
  if (!info) throw new AgentError('SETUP_RELEASE_DAMAGED', `${from} is not an edge-agent release (no ${RELEASE_FILE})`, { from });
  const act = dryRun ? 'would do' : 'done';
  const before = releaseLinks(root);
  const dest = join(before.home, 'releases', info.version);
  const steps: ReleaseStep[] = [];
  const files = verifyRelease(from);
  steps.push({
    action: 'check release',
    path: from,
    status: 'done',
    detail: `${files} files match ${CHECKSUM_FILE} (edge-agent ${info.version}, ${info.arch})`,
  });
  if (resolve(from) !== resolve(dest)) {
    if (!dryRun) {
      const tmp = join(before.home, 'releases', `.${info.version}.${process.pid}`);
      rmSync(tmp, { recursive: true, force: true });
      cpSync(from, tmp, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      const old = join(before.home, 'releases', `.${info.version}.old.${process.pid}`);
      if (existsSync(dest)) renameSync(dest, old);
      renameSync(tmp, dest);
      rmSync(old, { recursive: true, force: true });
    }
    steps.push({ action: 'copy release', path: dest, status: act });
  }
  const previous =
    before.current !== null && before.current !== info.version ? before.current : before.previous !== info.version ? before.previous : null;
  if (!dryRun) {
    pointLink(before.home, 'previous', previous);
    pointLink(before.home, 'current', info.version);
  }
  steps.push({
    action: 'make it current',
    path: join(before.home, 'current'),
    status: act,
    detail: `current -> ${info.version}${previous ? `, previous -> ${previous} (edge-agent rollback goes back to it)` : ''}`,
  });
  const stale = before.installed.filter((v) => v !== info.version && v !== previous);
  if (!dryRun) for (const v of stale) rmSync(join(before.home, 'releases', v), { recursive: true, force: true });
  if (stale.length) steps.push({ action: 'remove older releases', status: act, detail: stale.join(', ') });
  return steps;
}

/** Swaps `current` and `previous`: the release before runs again (after a restart). */
export function rollbackRelease(root: string, dryRun: boolean): { from: string; to: string; steps: ReleaseStep[] } {
  const links = releaseLinks(root);
  if (links.current === null) {
    throw new AgentError('SETUP_NOT_INSTALLED', `no installed release at ${links.home} (no "current" link)`, { home: links.home });
  }
  if (links.previous === null || !existsSync(join(links.home, 'releases', links.previous, RELEASE_FILE))) {
    throw new AgentError(
      'SETUP_NO_PREVIOUS_RELEASE',
      `only ${links.current} is installed at ${links.home}: there is no previous release to go back to`,
      { home: links.home, current: links.current, previous: links.previous },
    );
  }
  const { current: from, previous: to } = links;
  if (!dryRun) {
    pointLink(links.home, 'previous', from);
    pointLink(links.home, 'current', to);
  }
  return {
    from,
    to,
    steps: [
      {
        action: 'switch release',
        path: join(links.home, 'current'),
        status: dryRun ? 'would do' : 'done',
        detail: `current -> ${to}, previous -> ${from}`,
      },
    ],
  };
}
