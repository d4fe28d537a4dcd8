// Who holds a device, from a /proc laid out in a temporary folder: the lock's owner first
// (/proc/locks), else whoever has it open (/proc/PID/fd), a symlink to the device followed.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeHolder, portHolders } from '../../../../drivers/transport/port-holders.js';

function fakeProc(): { proc: string; device: string; link: string } {
  const root = mkdtempSync(join(tmpdir(), 'holders-'));
  const device = join(root, 'ttyUSB0');
  writeFileSync(device, '');
  const link = join(root, 'fingerprint0');
  symlinkSync(device, link);
  const proc = join(root, 'proc');
  for (const [pid, cmd] of [
    [4242, ['node', '/opt/edge-agent/current/dist/cli/main.js', 'run']],
    [777, ['socat', 'pty,link=x']],
    [555, ['bash']],
  ] as const) {
    mkdirSync(join(proc, String(pid), 'fd'), { recursive: true });
    writeFileSync(join(proc, String(pid), 'cmdline'), `${cmd.join('\0')}\0`);
  }
  symlinkSync(device, join(proc, '4242', 'fd', '21'));
  symlinkSync(device, join(proc, '777', 'fd', '5'));
  symlinkSync('/dev/null', join(proc, '555', 'fd', '0'));
  return { proc, device, link };
}

function lockLine(device: string, pid: number): string {
  const st = statSync(device);
  const major = (st.dev >> 8) & 0xfff;
  const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
  return `1: FLOCK  ADVISORY  WRITE ${pid} ${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino} 0 EOF\n`;
}

describe('portHolders', () => {
  it('names the process holding the lock, through a symlink to the device', () => {
    const { proc, device, link } = fakeProc();
    writeFileSync(join(proc, 'locks'), `1: POSIX  ADVISORY  READ 9 fe:00:1 128 128\n${lockLine(device, 4242)}`);
    const holders = portHolders(link, proc);
    expect(holders).toEqual([{ pid: 4242, command: 'node /opt/edge-agent/current/dist/cli/main.js run', self: false }]);
    expect(describeHolder(holders[0]!)).toBe('pid 4242 (node /opt/edge-agent/current/dist/cli/main.js run)');
  });

  it('without a lock on it, every process that has it open; nothing for a missing path', () => {
    const { proc, device } = fakeProc();
    writeFileSync(join(proc, 'locks'), '');
    expect(
      portHolders(device, proc)
        .map((h) => h.pid)
        .sort((a, b) => a - b),
    ).toEqual([777, 4242]);
    expect(portHolders(join(proc, 'nope'), proc)).toEqual([]);
    expect(describeHolder({ pid: process.pid, command: 'x', self: true })).toBe(`this process (pid ${process.pid})`);
  });
});
