/**
 * What a benchmark reads about another process from /proc: resident memory and CPU time, sampled
 * while it works (the peak RSS of `run` while draining, of `fleet --watch` while it prints).
 */
import { readFileSync } from 'node:fs';

/** Resident set size of `pid` in MB (VmRSS), or null once it is gone. */
export function rssMb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) of `pid` in ms, or null once it is gone. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "pid (comm) ": state is field 0; utime and stime are fields 11 and 12, in clock ticks (100 Hz on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `everyMs` until stopped: the peak, the last and every sample. */
export class RssSampler {
  readonly pid: number;
  peakMb = 0;
  lastMb = 0;
  readonly samples: number[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(pid: number, everyMs = 200) {
    this.pid = pid;
    this.#timer = setInterval(() => this.sample(), everyMs);
    this.#timer.unref();
    this.sample();
  }

  sample(): number | null {
    const mb = rssMb(this.pid);
    if (mb === null) return null;
    this.samples.push(mb);
    this.lastMb = mb;
    if (mb > this.peakMb) this.peakMb = mb;
    return mb;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

export const round = (v: number, digits = 1): number => Math.round(v * 10 ** digits) / 10 ** digits;

export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
