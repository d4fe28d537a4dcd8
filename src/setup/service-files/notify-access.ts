/**
 * The NotifyAccess drop-in: written where the unix-dgram addon does not load with the unit's node
 * (install-service, rollback, and the package's postinst the same way), removed where it loads.
 *
 * Tested in test/unit/setup/releases.test.ts (the drop-in written where the addon does not load with the
 * unit's node, removed where it does) and test/integration/systemd-unit.test.ts (the unit with
 * NotifyAccess=all passes systemd-analyze verify; install-service writes the drop-in only where needed).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../../core/atomic-file.js';
import type { ReleaseStep } from '../releases.js';
import { UNIT_NAME } from './systemd-unit.js';

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
export function ownUnixDgram(): string | null {
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
export function notifyAccessStep(root: string, pkgDir: string | null, node: string, dryRun: boolean): ReleaseStep {
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
