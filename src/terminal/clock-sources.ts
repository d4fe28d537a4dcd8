/**
 * Is the wall clock right? A Raspberry Pi has no battery-backed clock: it boots at 1970 or at
 * the last time fake-hwclock saved, and is only right once NTP has synchronized it. The time
 * authority (time-authority.ts) asks here, and adds what it remembers (`judgeClock`: a clock
 * earlier than a time already trusted is never trusted).
 *
 * Sources, in order; the first that can tell decides:
 *  1. the year: before 2024 the clock has never been set (this wins over every other source);
 *  2. `timedatectl show -p NTPSynchronized --value`: the kernel's own flag (adjtimex STA_UNSYNC)
 *     as timedated reports it, whichever NTP client sets the clock (timesyncd, chrony, ntpd);
 *  3. `/run/systemd/timesync/synchronized`: systemd-timesyncd creates it at its first sync of
 *     the boot (its absence proves nothing: another NTP client may be in use);
 *  4. `chronyc -n tracking`: "Leap status : Normal" once chrony is synchronized.
 * When no source can tell (no systemd, no chrony: a container, a laptop), a plausible year
 * counts as synchronized, reported as source `assumed` so doctor says so.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';

export const MIN_PLAUSIBLE_YEAR = 2024;

export interface ClockState {
  synchronized: boolean;
  /** Which source decided: year, timedatectl, timesyncd, chrony, assumed. */
  source: string;
  detail: string;
}

/** A way of telling: true/false when it knows, null when it cannot tell. */
export interface ClockSource {
  name: string;
  check(): Promise<boolean | null>;
}

/** Runs a program and resolves with its stdout, or null when it is missing, fails or hangs. */
function output(cmd: string, args: string[], timeoutMs = 3000): Promise<string | null> {
  return new Promise((resolve) => {
    let out = '';
    let settled = false;
    const done = (v: string | null) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(v);
      }
    };
    // Without NOTIFY_SOCKET: a failing systemd tool reports ERRNO= to it, which systemd would
    // take as the agent's own status.
    const { NOTIFY_SOCKET: _notify, ...env } = process.env;
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'], env });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(null);
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => done(null));
    child.on('close', (code) => done(code === 0 ? out : null));
  });
}

export function timedatectlSource(command = 'timedatectl'): ClockSource {
  return {
    name: 'timedatectl',
    async check() {
      const out = (await output(command, ['show', '-p', 'NTPSynchronized', '--value']))?.trim();
      return out === 'yes' ? true : out === 'no' ? false : null;
    },
  };
}

export function timesyncdSource(file = '/run/systemd/timesync/synchronized'): ClockSource {
  return {
    name: 'timesyncd',
    async check() {
      try {
        await access(file);
        return true;
      } catch {
        return null;
      }
    },
  };
}

export function chronySource(command = 'chronyc'): ClockSource {
  return {
    name: 'chrony',
    async check() {
      const out = await output(command, ['-n', 'tracking']);
      const m = out?.match(/^Leap status\s*:\s*(.+)$/m);
      if (!m) return null;
      return m[1]!.trim() === 'Normal';
    },
  };
}

export const DEFAULT_SOURCES: readonly ClockSource[] = [timedatectlSource(), timesyncdSource(), chronySource()];

export type ClockSourceName = 'timedatectl' | 'timesyncd' | 'chrony';

/** The sources named in the config (`clock.sources`), in that order; none: only the year tells. */
export function clockSources(names: readonly ClockSourceName[]): ClockSource[] {
  const make: Record<ClockSourceName, () => ClockSource> = {
    timedatectl: () => timedatectlSource(),
    timesyncd: () => timesyncdSource(),
    chrony: () => chronySource(),
  };
  return names.map((n) => make[n]());
}

/** The clock's state now, from the sources above. */
export async function detectClock(options: { now?: number; sources?: readonly ClockSource[] } = {}): Promise<ClockState> {
  const now = options.now ?? Date.now();
  const iso = new Date(now).toISOString();
  const year = new Date(now).getUTCFullYear();
  if (year < MIN_PLAUSIBLE_YEAR) {
    return { synchronized: false, source: 'year', detail: `the clock says ${iso}, before ${MIN_PLAUSIBLE_YEAR}: it has never been set` };
  }
  for (const source of options.sources ?? DEFAULT_SOURCES) {
    const r = await source.check();
    if (r !== null)
      return {
        synchronized: r,
        source: source.name,
        detail: `${source.name} says ${r ? 'synchronized' : 'not synchronized'} (clock ${iso})`,
      };
  }
  return {
    synchronized: true,
    source: 'assumed',
    detail: `no time service answers (timedatectl, timesyncd, chrony); the clock (${iso}) looks plausible and is taken as right`,
  };
}

/** The authority's verdict: the sources' answer plus what the terminal has already seen. */
export interface ClockJudgement {
  trusted: boolean;
  /** year, timedatectl, timesyncd, chrony, assumed (the sources), or seen (earlier than a trusted time). */
  source: string;
  detail: string;
}

/**
 * Trusted when the sources say synchronized and the clock is not earlier (by more than
 * `toleranceMs`) than `lastTrustedMs`, the latest time already trusted on this terminal: a clock
 * that went back is never trusted, whatever the sources say, until it has passed that time again.
 */
export function judgeClock(state: ClockState, wallMs: number, lastTrustedMs: number | null, toleranceMs: number): ClockJudgement {
  if (!state.synchronized) return { trusted: false, source: state.source, detail: state.detail };
  if (lastTrustedMs !== null && wallMs < lastTrustedMs - toleranceMs) {
    return {
      trusted: false,
      source: 'seen',
      detail: `the clock says ${new Date(wallMs).toISOString()}, ${Math.round((lastTrustedMs - wallMs) / 1000)} s earlier than ${new Date(lastTrustedMs).toISOString()} already trusted on this terminal: a clock that went back is not trusted until it passes that time`,
    };
  }
  return { trusted: true, source: state.source, detail: state.detail };
}

/**
 * The wall clock as the agent reads it: `Date.now()`. Tests that cannot fake the system clock
 * (no libfaketime) point `EDGE_AGENT_TEST_CLOCK_OFFSET_FILE` at a file holding an offset in
 * milliseconds, read at every call, so they can step the daemon's wall clock while it runs
 * (the monotonic clock stays real, as with a real step). Nothing else sets it.
 */
export function wallClock(env: NodeJS.ProcessEnv = process.env): () => number {
  const file = env.EDGE_AGENT_TEST_CLOCK_OFFSET_FILE;
  if (!file) return Date.now;
  return () => {
    let offset = 0;
    try {
      offset = Number(readFileSync(file, 'utf8').trim()) || 0;
    } catch {
      // no file yet: no offset
    }
    return Date.now() + offset;
  };
}
