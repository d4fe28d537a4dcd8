/**
 * writeStdin (test/helpers/cli.ts), which every test that types into a child uses: a child that
 * has exited before reading its stdin makes the write fail with EPIPE after the call returned.
 * Unhandled, that error failed a whole run as an uncaught exception (the technician walkthrough's
 * `sh -c` children); through writeStdin the test goes on to check the child's exit and output.
 *
 * Tests: test/helpers/cli.ts (writeStdin).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { waitForLine, writeStdin } from '../helpers/cli.js';

describe('writeStdin', () => {
  it('takes the EPIPE of a write to a child that closed its stdin without reading it', async () => {
    // The child closes its end of the pipe and lives on: the race the walkthrough lost, where a
    // child exits before it reads and the write comes before node has seen the exit.
    const child = spawn(process.execPath, ['-e', "require('node:fs').closeSync(0); console.log('closed'); setInterval(() => {}, 1000)"], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      await waitForLine(child, /^closed$/, 20_000, 'stdout');
      const stdin = child.stdin as Writable;
      // (events.once would add an 'error' listener of its own: a plain one for 'close'.)
      const closed = new Promise((resolve) => stdin.on('close', resolve));
      writeStdin(child, 'the answer nobody reads\n'.repeat(1000), { end: true });
      await closed;
      // The write did fail on the closed pipe, and the only listener was writeStdin's: unhandled,
      // the error would have been an uncaught exception, which vitest reports as a failed run.
      expect(['EPIPE', 'ECONNRESET']).toContain((stdin.errored as NodeJS.ErrnoException | null)?.code);
      expect(stdin.listenerCount('error')).toBe(1);
      expect(child.exitCode).toBe(null); // still running: the error came from the pipe, not from its exit
    } finally {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
  });

  it('writes lines to a child that reads them, and closes its stdin', async () => {
    const child = spawn(process.execPath, ['-e', 'process.stdin.pipe(process.stdout)'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    writeStdin(child, 'one\n');
    writeStdin(child, 'two\n');
    writeStdin(child, undefined, { end: true });
    const [code] = await once(child, 'close');
    expect(code).toBe(0);
    expect(out).toBe('one\ntwo\n');
    expect(child.stdin!.listenerCount('error')).toBe(1); // one guard however many writes
  });
});
