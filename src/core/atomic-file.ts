/**
 * Writes a file so that a reader (or a power cut) sees either the old content or the new one,
 * never half of it: write a temporary file in the same folder with the final mode, fsync it,
 * rename it over the target, then fsync the folder so the rename itself is durable.
 */
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AgentError } from './errors.js';

export function writeFileAtomic(file: string, content: string | Buffer, mode = 0o644): void {
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    // The mode is set at creation, so a secret is never readable by others, not even briefly.
    const fd = openSync(tmp, 'wx', mode);
    try {
      // Exactly `mode`, whatever the umask (a config must stay readable by the service user).
      fchmodSync(fd, mode);
      const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    const e = err as NodeJS.ErrnoException;
    throw new AgentError(
      'AGENT_WRITE_FAILED',
      `cannot write ${file}: ${e.code ?? e.message}`,
      { file },
      {
        hint:
          e.code === 'ENOSPC'
            ? 'the disk is full: free some space and run again'
            : 'check that the folder exists and is writable by this user',
        cause: err,
      },
    );
  }
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // Some filesystems refuse fsync on a folder; the rename has happened either way.
  }
}
