import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsError, ownerOf, readablePath, userName } from '../../../src/core/fs-errors.js';

const errno = (code: string, path: string, syscall = 'open') =>
  Object.assign(new Error(`${code}: x, ${syscall} '${path}'`), { code, path, syscall });

describe('file-system errors with a code and a hint', () => {
  it('EACCES names the user that owns the folder and how to run as them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-errors-'));
    const e = fsError(errno('EACCES', join(dir, 'agent.db')));
    const owner = userName(process.getuid!());
    expect(e?.code).toBe('CORE_FS_ACCESS');
    expect(e?.message).toContain(`cannot open ${join(dir, 'agent.db')} (EACCES)`);
    expect(e?.hint).toContain(owner === 'root' ? `root owns ${dir}` : `run the command as ${owner}, the user that owns ${dir}`);
    expect(ownerOf(join(dir, 'not-yet', 'agent.db'))).toEqual({ folder: dir, user: owner });
  });

  it('ENOSPC and EROFS say what to do; anything else is left to the caller', () => {
    expect(fsError(errno('ENOSPC', '/data/agent.db-wal', 'write'))).toMatchObject({ code: 'CORE_FS_FULL', retryable: true });
    expect(fsError(errno('ENOSPC', '/data/agent.db-wal', 'write'))?.hint).toMatch(/free space on the file system of \/data .*df -h/);
    expect(fsError(errno('EROFS', '/data/agent.db'))).toMatchObject({ code: 'CORE_FS_READ_ONLY' });
    expect(fsError(errno('EROFS', '/data/agent.db'))?.hint).toMatch(/remount it read-write/);
    expect(fsError(errno('ENOENT', '/data/agent.db'))).toBeNull();
    expect(fsError(new Error('plain'))).toBeNull();
  });

  it('tells a file that is absent from one that is there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fs-errors-'));
    writeFileSync(join(dir, 'a'), 'x');
    expect(readablePath(join(dir, 'a'))).toBe('readable');
    expect(readablePath(join(dir, 'b'))).toBe('absent');
  });

  it('names a user by its number when the passwd file does not', () => {
    expect(userName(4242, '/nonexistent/passwd')).toBe('uid 4242');
  });
});
