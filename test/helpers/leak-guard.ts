/**
 * No process a test file starts outlives the file.
 *
 * Each test file gets an id in the environment (`VITEST_LEAK_GUARD`), which every process it
 * starts inherits: `edge-agent run`/`simulate` children, their socat grandchildren, mosquitto,
 * the wizard's pty. After the file's own hooks, `sweepLeaks` gives whatever still carries the id
 * (found through /proc/PID/environ) a short grace to exit, then SIGKILL, and the file's output
 * names it (`leak-guard: ... left running`) so the test that leaked can be fixed. The same sweep
 * runs when the worker exits, so a crashed or timed-out file leaves nothing behind either.
 * The name has no `EDGE_AGENT_` prefix on purpose: those variables are agent configuration.
 * Installed by the setup file (test/helpers/setup.ts).
 */
import { expect } from 'vitest';
import { killPids, procFile, processIds } from './procs.js';

const VAR = 'VITEST_LEAK_GUARD';
const id = `${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 10)}`;
const marker = `${VAR}=${id}\0`;
process.env[VAR] = id;

interface Owned {
  pid: number;
  cmd: string;
}

/** Live processes (not this one) started from this test file, directly or not. */
function owned(): Owned[] {
  const out: Owned[] = [];
  for (const pid of processIds()) {
    // A zombie's environ reads empty, so only processes still running match.
    if (pid === process.pid || !procFile(pid, 'environ')?.includes(marker)) continue;
    out.push({ pid, cmd: (procFile(pid, 'cmdline') ?? '').split('\0').join(' ').trim() });
  }
  return out;
}

/** Kills what the file left running (after a grace of 3 s for children told to stop) and names it. */
export async function sweepLeaks(): Promise<void> {
  let left = owned();
  // Children told to stop (SIGTERM without waiting) get a moment to finish on their own.
  const deadline = Date.now() + 3000;
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = owned();
  }
  if (left.length === 0) return;
  killPids(left.map((p) => p.pid));
  const file = expect.getState().testPath ?? 'this test file';
  console.warn(
    `leak-guard: ${file} left running ${left.length} process(es), now killed:\n${left.map((p) => `  ${p.pid} ${p.cmd.slice(0, 200)}`).join('\n')}`,
  );
}

process.once('exit', () => killPids(owned().map((p) => p.pid)));
