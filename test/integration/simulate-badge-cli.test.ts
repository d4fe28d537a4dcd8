// `edge-agent simulate badge-hid` as a technician runs it: a keyboard-wedge reader served
// in-process, the card numbers typed through the real HID reader and printed as read; the fault
// switches a reader has, and those it has not, named plainly. (`simulate badge --link` on a pty is
// driven by test/integration/agent-badge-e2e.test.ts where socat exists.)
import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { killTree, runCli, spawnCli, waitForLine, writeStdin } from '../helpers/cli.js';
import { exitOf, stopChild } from '../helpers/agent.js';

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await stopChild(c).catch(() => killTree(c));
});

async function start(args: string[]) {
  const child = spawnCli(['simulate', 'badge-hid', ...args]);
  children.push(child);
  await waitForLine(child, /^device: in-process .*\(badge-hid\)$/, 20_000, 'stdout');
  return {
    child,
    async send(line: string) {
      const reply = waitForLine(child, /^(ok|error): .*/, 10_000, 'stdout');
      writeStdin(child, `${line}\n`);
      return (await reply)[0];
    },
  };
}

describe('edge-agent simulate badge-hid', () => {
  it('types a card the in-process reader reads, with its faults', async () => {
    const sim = await start(['--format', 'wiegand26']);
    // (A line is matched as it arrives, so the pattern is the whole line expected.)
    const read = waitForLine(sim.child, /^read: wiegand26 card 24:8000000$/, 10_000, 'stdout');
    expect(await sim.send('card 8000000')).toBe('ok: card 8000000');
    await read;
    expect(await sim.send('fault bad-checksum 1')).toBe('ok: fault bad-checksum 1');
    const failed = waitForLine(sim.child, /^read failed: DRIVER_CHECKSUM/, 10_000, 'stdout');
    await sim.send('card 5');
    await failed;
    expect(await sim.send('card 16777216')).toMatch(/^error: .*DRIVER_BAD_ARGUMENT/);
    expect(await sim.send('fault no-finger on')).toMatch(/^error: .*unknown keyboard-wedge badge reader simulator fault "no-finger"/);
    expect(await sim.send('quit')).toBe('ok: quit');
    // "quit" stops it by itself: wait for that exit (a SIGTERM now would race it).
    expect(await exitOf(sim.child)).toBe(0);
  }, 60_000);

  it('refuses a format a keyboard cannot type', async () => {
    const r = await runCli(['simulate', 'badge-hid', '--format', 'em4100-hex'], { timeoutMs: 20_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/DRIVER_BAD_ARGUMENT: a keyboard-wedge reader cannot send em4100-hex/);
  }, 30_000);
});
