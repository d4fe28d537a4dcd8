/**
 * Files only this program's user may read: the data folder (0700) and the databases in it with
 * their WAL and shared-memory files (0600). Modes are set explicitly after creation, so the umask
 * (often 022, giving 0755 and 0644) does not decide them; a file or folder found looser than it
 * should be is tightened and the change logged. Used by the SQLite wrapper (every database of the
 * agent and the service), the agent's data folder and doctor's check.
 */
import { chmodSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { logger } from './logger.js';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

const log = logger('core:files');

/** The files SQLite keeps for the database at `path`: the database, its WAL and its shared memory. */
export function sqliteFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/** `0644` for messages. */
export function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/** The mode bits of `path`, or null when it does not exist. */
export function modeOf(path: string): number | null {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return null;
  }
}

/**
 * Gives `path` at most `mode` (removes group and other bits beyond it) when it exists and is
 * looser; logs what it changed. Returns the old mode when it changed it, else null.
 */
export function tightenMode(path: string, mode: number): number | null {
  const old = modeOf(path);
  if (old === null || (old & ~mode) === 0) return null;
  chmodSync(path, old & mode);
  log.warn({ path, was: octal(old), now: octal(old & mode) }, 'file mode was looser than it must be: tightened');
  return old;
}

/**
 * Creates folder `dir` and its missing parents with mode 0700, whatever the umask. With
 * `tighten`, an existing `dir` looser than 0700 is tightened (and logged): for a folder this
 * program owns alone, such as the agent's data folder. Returns true when it created `dir`.
 */
export function makePrivateDir(dir: string, options: { tighten?: boolean } = {}): boolean {
  const target = resolve(dir);
  if (existsSync(target)) {
    if (options.tighten) tightenMode(target, PRIVATE_DIR_MODE);
    return false;
  }
  const first = mkdirSync(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdir's mode went through the umask: set it exactly on every folder made here.
  for (let d = target; first !== undefined; d = dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE);
    if (d === first || d === dirname(d)) break;
  }
  return true;
}

/** Creates an empty file at `path` with mode 0600 if there is none (an empty file is a valid empty SQLite database). */
export function createPrivateFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Every database file of `path` that exists with a mode looser than 0600, tightened and logged. */
export function tightenDatabaseFiles(path: string): string[] {
  return sqliteFiles(path).filter((f) => tightenMode(f, PRIVATE_FILE_MODE) !== null);
}

/** What is looser than it must be among a data folder and its database files (for doctor), without changing anything. */
export function looseModes(dir: string, databases: string[]): Array<{ path: string; mode: string; want: string }> {
  const out: Array<{ path: string; mode: string; want: string }> = [];
  const check = (path: string, want: number) => {
    const m = modeOf(path);
    if (m !== null && (m & ~want) !== 0) out.push({ path, mode: octal(m), want: octal(want) });
  };
  check(dir, PRIVATE_DIR_MODE);
  for (const db of databases) for (const f of sqliteFiles(db)) check(f, PRIVATE_FILE_MODE);
  return out;
}
