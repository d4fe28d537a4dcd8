/** Processes as Linux's /proc shows them, for tests that must leave none behind. */
import { readdirSync, readFileSync } from 'node:fs';

/** Every process id (empty where there is no /proc). */
export function processIds(): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
}

/** A file of /proc/PID, or null once the process is gone (or not ours to read). */
export function procFile(pid: number, name: 'stat' | 'environ' | 'cmdline'): string | null {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'latin1');
  } catch {
    return null;
  }
}

/** Every live descendant of `pid`, children first. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const p of processIds()) {
    const stat = procFile(p, 'stat');
    if (stat === null) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), p]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** SIGKILL to each (those already gone are skipped). */
export function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
