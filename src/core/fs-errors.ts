/**
 * A file-system error said so that a person can act on it. Node's own (`EACCES: permission
 * denied, open '/var/lib/edge-agent/agent.db'`) carries neither a code of ours nor a hint:
 *
 * - EACCES, EPERM: who may (the user that owns the folder) and how to run as them, or as root;
 * - ENOSPC, EDQUOT: the disk (or the quota) is full, and what to free;
 * - EROFS: the file system is mounted read-only.
 *
 * `fsError` answers null for anything else, so a caller can map what it knows and pass the rest on.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { AgentError } from './errors.js';

/** The name of user `uid` from /etc/passwd, else `uid N`. */
export function userName(uid: number, passwd = '/etc/passwd'): string {
  try {
    for (const line of readFileSync(passwd, 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid) return name;
    }
  } catch {
    // no passwd file to read: the number says it
  }
  return `uid ${uid}`;
}

/** The nearest folder of `path` that exists (itself when it is one), and who owns it. */
export function ownerOf(path: string): { folder: string; user: string } | null {
  for (let p = path; ; p = dirname(p)) {
    try {
      const st = statSync(p);
      const folder = st.isDirectory() ? p : dirname(p);
      return { folder, user: userName(st.uid) };
    } catch {
      // not there or not reachable: try the folder above
    }
    if (dirname(p) === p) return null;
  }
}

/** The user this process runs as. */
function currentUser(): string {
  return typeof process.getuid === 'function' ? userName(process.getuid()) : 'this user';
}

/** `err` as an AgentError with a code and a hint when it is a file-system error of the kinds above, else null. */
export function fsError(err: unknown): AgentError | null {
  const e = err as NodeJS.ErrnoException | null;
  if (!e || typeof e !== 'object' || typeof e.code !== 'string') return null;
  const path = typeof e.path === 'string' ? e.path : null;
  const where = path ? ` ${path}` : '';
  const op = e.syscall ? `${e.syscall}` : 'use';
  switch (e.code) {
    case 'EACCES':
    case 'EPERM': {
      const owner = path ? ownerOf(path) : null;
      const me = currentUser();
      return new AgentError(
        'CORE_FS_ACCESS',
        `permission denied: user ${me} cannot ${op}${where} (${e.code})`,
        { path, syscall: e.syscall ?? null, user: me, owner: owner?.user ?? null },
        {
          hint: owner
            ? owner.user === 'root'
              ? `run the command as root (sudo edge-agent ...): root owns ${owner.folder}; or point --data at a folder ${me} may use`
              : `run the command as ${owner.user}, the user that owns ${owner.folder} (sudo -u ${owner.user} edge-agent ...), or as root; or point --data at a folder ${me} may use`
            : 'run the command as the agent’s service user or as root; or point --data at a folder this user may use',
          cause: e,
        },
      );
    }
    case 'ENOSPC':
    case 'EDQUOT':
      return new AgentError(
        'CORE_FS_FULL',
        `no space left to ${op}${where} (${e.code === 'EDQUOT' ? 'quota exceeded' : 'the disk is full'})`,
        { path, syscall: e.syscall ?? null },
        {
          hint: `free space on the file system of ${path ? dirname(path) : 'the data folder'} (df -h shows it; old logs, journal: journalctl --vacuum-size=100M), then try again: nothing recorded before is lost`,
          retryable: true,
          cause: e,
        },
      );
    case 'EROFS':
      return new AgentError(
        'CORE_FS_READ_ONLY',
        `the file system of${where || ' the data folder'} is read-only`,
        { path, syscall: e.syscall ?? null },
        {
          hint: 'remount it read-write (mount -o remount,rw …; a card that turned read-only after errors needs fsck or replacing), or point --data at a writable folder',
          cause: e,
        },
      );
    default:
      return null;
  }
}

/**
 * Whether `path` is there to read: `absent` only when the system says it does not exist, an
 * AgentError (CORE_FS_ACCESS, with its hint) when this user cannot tell or cannot read it, so a
 * check never reports "not there yet" for a file it may not see.
 */
export function readablePath(path: string): 'readable' | 'absent' | AgentError {
  try {
    accessSync(path, constants.R_OK);
    return 'readable';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    return fsError(err) ?? new AgentError('CORE_FS_ACCESS', `cannot read ${path}: ${(err as Error).message}`, { path }, { cause: err });
  }
}
