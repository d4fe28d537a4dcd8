/**
 * Fidelity tiers: which system programs this machine has. A test that needs one (socat PTYs,
 * mosquitto, systemd-analyze, ...) is declared with
 *
 *   describe.skipIf(!has('socat'))('over a real pty (needs socat)', ...)
 *
 * so a missing program is known before the test starts and the summary says why it was skipped,
 * instead of a spawn that fails or a wait that runs into its timeout.
 *
 * Looked up on `$PATH` plus `/usr/sbin` and `/sbin` (Debian puts mosquitto there) and
 * `/usr/lib/postgresql/<version>/bin` (Debian's initdb and pg_ctl, newest first), answered once
 * per program per process. `EDGE_AGENT_TEST_HIDE` (comma-separated names) hides programs that
 * exist, to try the fresh-machine tier on a full machine.
 *
 * Optional native addons (`unix-dgram`) are the same kind of tier: npm skips one that does not
 * build, so a test that needs one asks `loads('unix-dgram')` and says `(needs the unix-dgram addon)`.
 */
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

const known = new Map<string, string | null>();

function hidden(): Set<string> {
  return new Set(
    (process.env.EDGE_AGENT_TEST_HIDE ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** Debian's PostgreSQL program folders, newest version first. */
function postgresDirs(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => `/usr/lib/postgresql/${v}/bin`);
  } catch {
    return [];
  }
}

/** The absolute path of `program`, or null where this machine does not have it. */
export function which(program: string): string | null {
  if (known.has(program)) return known.get(program)!;
  let found: string | null = null;
  if (!hidden().has(program)) {
    const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', ...postgresDirs()].filter(Boolean);
    for (const dir of dirs) {
      const candidate = join(dir, program);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        found = candidate;
        break;
      } catch {
        // not here
      }
    }
  }
  known.set(program, found);
  return found;
}

/** True when every one of `programs` exists on this machine. */
export function has(...programs: string[]): boolean {
  return programs.every((p) => which(p) !== null);
}

/** The reason to put in a skipped suite's name: `needs socat, mosquitto`. */
export function needs(...programs: string[]): string {
  return `needs ${programs.join(', ')}`;
}

/** True when the optional package `name` is installed and loads (a native addon that built). */
export function loads(name: string): boolean {
  try {
    createRequire(import.meta.url)(name);
    return true;
  } catch {
    return false;
  }
}
