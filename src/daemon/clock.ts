/**
 * Is the wall clock right? A Raspberry Pi has no battery-backed clock: it boots at 1970 or at
 * the last time fake-hwclock saved, and is only right once NTP has synchronized it. Punches taken
 * before that are marked (the punch policy asks `isSynchronized()`), and corrected from the
 * monotonic clock when synchronization arrives (`outbox.correctUnsynced`).
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
import { access } from 'node:fs/promises';
import { TypedEmitter } from '../core/events.js';
import { logger } from '../core/logger.js';
import { monotonicMs } from '../core/time.js';
import { currentBootId } from '../store/boot-id.js';

const log = logger('agent:clock');

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
    if (r !== null) return { synchronized: r, source: source.name, detail: `${source.name} says ${r ? 'synchronized' : 'not synchronized'} (clock ${iso})` };
  }
  return { synchronized: true, source: 'assumed', detail: `no time service answers (timedatectl, timesyncd, chrony); the clock (${iso}) looks plausible and is taken as right` };
}

/** The part of the outbox the monitor needs. */
export interface UnsyncedCorrector {
  correctUnsynced(at: { bootId: string; wallNowMs: number; monoNowMs: number }): Promise<number>;
}

export interface ClockMonitorOptions {
  outbox?: UnsyncedCorrector | null;
  detect?: () => Promise<ClockState>;
  /** Check interval while not synchronized (default 5 s) and once synchronized (default 60 s). */
  unsyncedIntervalMs?: number;
  syncedIntervalMs?: number;
  bootId?: () => string;
  wallNow?: () => number;
  monoNow?: () => number;
}

/** A type (not an interface) so it fits `Record<string, unknown>` where metrics are gathered. */
export type ClockMetrics = {
  clockSynchronized: boolean;
  clockSource: string;
  /** Punches whose time was corrected from the monotonic clock since the agent started. */
  correctedPunches: number;
  /** Transitions to synchronized seen since the agent started. */
  synchronizations: number;
};

/**
 * Daemon component: knows whether the clock is synchronized, and on each transition to
 * synchronized corrects the punches taken before (same boot) and counts them.
 */
export class ClockMonitor extends TypedEmitter<{ change: ClockState; corrected: { count: number } }> {
  readonly name = 'clock';
  readonly #o: ClockMonitorOptions;
  #state: ClockState | null = null;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<ClockState> | null = null;
  #corrected = 0;
  #syncs = 0;
  #stopped = false;
  #retryCorrection = false;

  constructor(options: ClockMonitorOptions = {}) {
    super();
    this.#o = options;
  }

  /** Synchronized now (as of the last check); false before the first check. */
  isSynchronized(): boolean {
    return this.#state?.synchronized ?? false;
  }

  state(): ClockState | null {
    return this.#state;
  }

  metrics(): ClockMetrics {
    return { clockSynchronized: this.isSynchronized(), clockSource: this.#state?.source ?? 'unknown', correctedPunches: this.#corrected, synchronizations: this.#syncs };
  }

  /** Checks once (concurrent calls share the check) and acts on a transition. */
  check(): Promise<ClockState> {
    this.#checking ??= this.#check().finally(() => (this.#checking = null));
    return this.#checking;
  }

  async #check(): Promise<ClockState> {
    const next = await (this.#o.detect ?? (() => detectClock()))();
    const prev = this.#state;
    this.#state = next;
    if (!prev || prev.synchronized !== next.synchronized) {
      if (next.synchronized) log.info({ source: next.source }, `clock synchronized: ${next.detail}`);
      else log.warn({ source: next.source }, `clock not synchronized: ${next.detail}; punches are marked and corrected once it is`);
      this.emit('change', next);
    }
    // Correct on the transition, on the first check (punches of an earlier run of this boot),
    // and again after a correction that failed.
    if (next.synchronized && (!prev || !prev.synchronized || this.#retryCorrection)) {
      if (prev && !prev.synchronized) this.#syncs++;
      await this.#correct();
    }
    return next;
  }

  async #correct(): Promise<void> {
    this.#retryCorrection = false;
    if (!this.#o.outbox) return;
    try {
      const count = await this.#o.outbox.correctUnsynced({
        bootId: (this.#o.bootId ?? currentBootId)(),
        wallNowMs: (this.#o.wallNow ?? Date.now)(),
        monoNowMs: (this.#o.monoNow ?? monotonicMs)(),
      });
      if (count > 0) {
        this.#corrected += count;
        log.info({ count }, `corrected the time of ${count} punch(es) taken before the clock synchronized`);
        this.emit('corrected', { count });
      }
    } catch (err) {
      log.error({ err }, 'could not correct the punches taken before the clock synchronized; will retry at the next check');
      this.#retryCorrection = true;
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    const ms = this.isSynchronized() ? (this.#o.syncedIntervalMs ?? 60_000) : (this.#o.unsyncedIntervalMs ?? 5_000);
    this.#timer = setTimeout(() => {
      this.check().then(
        () => this.#schedule(),
        (err: unknown) => {
          log.error({ err }, 'clock check failed');
          this.#schedule();
        },
      );
    }, ms);
    this.#timer.unref();
  }

  /** As a daemon component: the outbox comes from the daemon's context unless one was given. */
  async start(ctx?: { outbox?: UnsyncedCorrector }): Promise<void> {
    if (!this.#o.outbox && ctx?.outbox) this.#o.outbox = ctx.outbox;
    this.#stopped = false;
    await this.check();
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#checking;
  }
}
