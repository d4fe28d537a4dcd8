/**
 * No litter: each test file gets a temporary folder of its own (`ea-test-*` in the system's temp
 * folder) as `TMPDIR`, for itself and every process it starts, so every `mkdtemp(tmpdir())` of a
 * test, a simulator's pty links, a daemon's files and onnxruntime's debug logs land there. The
 * setup file removes it after the file (once the leak guard has stopped what the file started);
 * the global setup removes and names one a crashed worker left.
 *
 * tsx keeps its compile cache in `$TMPDIR/tsx-UID`: the sandbox links it to the shared one, or
 * every CLI child of every file would compile the sources again.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const SANDBOX_PREFIX = 'ea-test-';

let sandbox: string | null = null;
let outside: string | undefined;

/** Makes this process's temp folder a new sandbox; returns its path. */
export function enterSandbox(): string {
  const root = tmpdir();
  outside = process.env.TMPDIR;
  sandbox = mkdtempSync(join(root, `${SANDBOX_PREFIX}${process.env.EDGE_AGENT_TEST_RUN ?? 'x'}-`));
  const tsxCache = `tsx-${process.geteuid?.() ?? userInfo().username}`;
  mkdirSync(join(root, tsxCache), { recursive: true });
  symlinkSync(join(root, tsxCache), join(sandbox, tsxCache));
  process.env.TMPDIR = sandbox;
  process.once('exit', leaveSandbox);
  return sandbox;
}

/** Removes the sandbox with everything in it, and gives the process its temp folder back. */
export function leaveSandbox(): void {
  if (!sandbox) return;
  rmSync(sandbox, { recursive: true, force: true, maxRetries: 3 });
  sandbox = null;
  if (outside === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = outside;
}
