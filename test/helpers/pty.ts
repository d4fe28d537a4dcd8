/** A real pseudo-terminal pair made by socat: open `a` with one side and `b` with the other. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PtyPair {
  a: string;
  b: string;
  close(): Promise<void>;
}

export async function createPtyPair(): Promise<PtyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-'));
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  const proc: ChildProcess = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d));
  const deadline = Date.now() + 5000;
  while (!(existsSync(a) && existsSync(b) && /starting data transfer loop/.test(stderr))) {
    if (proc.exitCode !== null) throw new Error(`socat exited: ${stderr}`);
    if (Date.now() > deadline) {
      proc.kill();
      throw new Error(`socat did not create the pty pair in 5 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    a,
    b,
    close: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
