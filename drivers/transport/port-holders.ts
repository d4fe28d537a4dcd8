/**
 * Who holds a device, read from /proc (Linux): first the process that holds its lock (serialport
 * takes an exclusive flock; /proc/locks shows it to everyone), else the processes whose open files
 * include it (another user's only as root). For an error message, never a decision.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { AgentError } from '../../src/core/errors.js';

export interface PortHolder {
  pid: number;
  /** The command line, shortened (arguments joined by spaces). */
  command: string;
  /** This very process. */
  self: boolean;
}

/**
 * The process holding the lock on `path`, else those that have it open (a symlink such as a udev
 * name or a socat link is followed).
 */
export function portHolders(path: string, procDir = '/proc'): PortHolder[] {
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    return [];
  }
  const lockers = lockHolders(target, procDir);
  if (lockers.length > 0) return lockers.map((pid) => holder(pid, procDir));
  let pids: string[];
  try {
    pids = readdirSync(procDir).filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const holders: PortHolder[] = [];
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`${procDir}/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to look at
    }
    const holds = fds.some((fd) => {
      try {
        return readlinkSync(`${procDir}/${pid}/fd/${fd}`) === target;
      } catch {
        return false;
      }
    });
    if (holds) holders.push(holder(Number(pid), procDir));
  }
  return holders;
}

/** Pids with a lock on the file (/proc/locks: `1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF`). */
function lockHolders(target: string, procDir: string): number[] {
  try {
    const st = statSync(target);
    // Linux's dev_t: major in bits 8-19 (and 32+), minor in bits 0-7 and 20-31.
    const major = (st.dev >> 8) & 0xfff;
    const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
    const pids = new Set<number>();
    for (const line of readFileSync(`${procDir}/locks`, 'utf8').split('\n')) {
      const m = /^\d+:\s+\S+\s+\S+\s+\S+\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
      if (m && Number(m[4]) === st.ino && parseInt(m[2]!, 16) === major && parseInt(m[3]!, 16) === minor) pids.add(Number(m[1]));
    }
    return [...pids];
  } catch {
    return [];
  }
}

function holder(pid: number, procDir: string): PortHolder {
  let command = '';
  try {
    command = readFileSync(`${procDir}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    // gone since, or not ours to read
  }
  return { pid, command: command.length > 160 ? `${command.slice(0, 157)}...` : command, self: pid === process.pid };
}

/** "pid 123 (edge-agent run ...)", or "this process", for a message. */
export function describeHolder(h: PortHolder): string {
  return h.self ? `this process (pid ${h.pid})` : `pid ${h.pid}${h.command ? ` (${h.command})` : ''}`;
}

/**
 * TRANSPORT_BUSY for a device another process holds (`holders`, default: as /proc shows them),
 * naming them in the message and in the context (pid, command) for the layers above.
 */
export function busyError(
  path: string,
  label: string,
  ctx: Record<string, unknown>,
  cause?: unknown,
  holders: PortHolder[] = portHolders(path),
): AgentError {
  const who = holders.length > 0 ? holders.map(describeHolder).join(', ') : 'another program';
  return new AgentError(
    'TRANSPORT_BUSY',
    `${label} is in use by another program: ${who} holds it`,
    { ...ctx, holders: holders.map((h) => ({ pid: h.pid, command: h.command })) },
    {
      hint:
        holders.length > 0
          ? `stop ${holders.map((h) => `pid ${h.pid}`).join(', ')} or let it do the work (the running agent: enrol through it, or systemctl stop edge-agent); a serial console on the Pi UART: disable it with raspi-config, Interface Options, Serial Port`
          : `"fuser -v ${path}" (as root) names it: the running agent (enrol through it, or systemctl stop edge-agent), another edge-agent command, or a serial console on the Pi UART (disable it with raspi-config)`,
      retryable: true,
      ...(cause !== undefined ? { cause } : {}),
    },
  );
}
