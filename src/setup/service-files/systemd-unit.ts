/**
 * The systemd unit shipped in `systemd/`: where that folder is, the unit's name and sections, the
 * unit with its ExecStart rendered, and what its sandbox (ProtectHome, PrivateTmp) would hide from
 * the command line it runs.
 *
 * Tested in test/integration/systemd-unit.test.ts (the unit under systemd-analyze verify and security,
 * its sections as rendered, what ProtectHome and PrivateTmp hide) and
 * test/integration/technician-walkthrough.test.ts (the unit install-service writes, read for the
 * Environment= the walkthrough's `edge-agent run` starts with).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '../../core/errors.js';

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
