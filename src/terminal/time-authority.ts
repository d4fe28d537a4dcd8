/**
 * The time authority: the one place that says whether the wall clock can be trusted, and the
 * one every part asks. The daemon starts it before anything that reads or writes punches; the
 * punch policy stamps punches with it (`stamp()`), the uploader claims nothing while it settles
 * (`open()`), and the CLI commands that record punches open one of their own on the same
 * database when no daemon runs.
 *
 * It is the terminal's judgement, beside the punch policy it stamps: its memory is the clock
 * store (src/store/clock-store.ts), the daemon only starts and stops it (its component,
 * src/daemon/components/time-authority.ts), and what `queue status` and doctor show of it is
 * src/setup/clock-report.ts.
 *
 * Trusted: the sources say synchronized (clock-sources.ts: year, timedatectl, timesyncd, chrony, or
 * assumed) and the clock is not earlier than the latest time already trusted on this terminal
 * (kept in the database, so a reboot with a clock set back is caught too).
 *
 * Every tick (1 s) it compares the wall clock with the monotonic clock: a step of more than
 * `stepThresholdMs` either way is logged with its size, counted, and makes the authority settle:
 * punches stamped meanwhile are untrusted, the uploader claims nothing, and the clock is judged
 * again at once.
 *
 * On every judgement that finds the clock trusted (the transition, and then every minute), one
 * transaction records the judgement and this boot's (wall, monotonic) anchor and corrects the
 * untrusted punches: those of this boot from the fresh anchor, those of an earlier boot from that
 * boot's last anchor. Punches of a boot that never had a trusted reading have no monotonic link:
 * they are held for a person's decision (`releaseUnsynced`), or sent as they are when the config
 * says so (`clock.earlierBootPunches: send`).
 */
import { TypedEmitter } from '../core/events.js';
import { logger } from '../core/logger.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import type { AgentConfig } from '../config/config.js';
import { monotonicMs } from '../core/time.js';
import { currentBootId } from '../store/boot-id.js';
import { ClockStore, type ClockAnchor, type ClockStep } from '../store/clock-store.js';
import type { Outbox } from '../store/outbox.js';
import type { PunchClock, PunchStamp } from './punch-policy.js';
import {
  clockSources,
  detectClock,
  judgeClock,
  MIN_PLAUSIBLE_YEAR,
  wallClock,
  DEFAULT_SOURCES,
  type ClockJudgement,
  type ClockSource,
  type ClockState,
} from './clock-sources.js';

const log = logger('agent:clock');

export type EarlierBootRule = 'hold' | 'send';

export interface TimeAuthorityOptions {
  db: SqliteDatabase;
  /** Where punches are corrected and released. */
  outbox: Pick<Outbox, 'correctWithin' | 'releaseWithin' | 'heldBoots'>;
  /** Asks the time sources; default `detectClock` over `sources` at the authority's own wall clock. */
  detect?: (wallMs: number) => Promise<ClockState>;
  sources?: readonly ClockSource[];
  wallNow?: () => number;
  monoNow?: () => number;
  bootId?: () => string;
  /** How often the wall clock is compared with the monotonic clock. Default 1000 ms. */
  tickMs?: number;
  /** A larger difference between the two is a step. Default 2000 ms. */
  stepThresholdMs?: number;
  /** How often the sources are asked while the clock is untrusted (default 5 s) and trusted (60 s). */
  unsyncedIntervalMs?: number;
  syncedIntervalMs?: number;
  earlierBootPunches?: EarlierBootRule;
}

/** A type (not an interface) so it fits `Record<string, unknown>` where metrics are gathered. */
export type ClockMetrics = {
  /** Kept from the clock monitor: now means trusted. */
  clockSynchronized: boolean;
  clockSource: string;
  /** Punches whose time was corrected from the monotonic clock since the agent started. */
  correctedPunches: number;
  /** Transitions to trusted since the agent started. */
  synchronizations: number;
  clockTrusted: boolean;
  clockDetail: string;
  /** The latest time trusted on this terminal (ISO). */
  lastTrustedAt: string | null;
  /** Steps seen on this terminal, ever; the last one with its signed size. */
  clockSteps: number;
  lastStep: { sizeSec: number; at: string } | null;
  /** Punches released as they are by the configured rule since the agent started. */
  releasedPunches: number;
};

export interface TimeAuthorityEvents extends Record<string, unknown> {
  change: ClockJudgement;
  corrected: { count: number };
  released: { count: number };
  step: ClockStep;
  /** A judgement finished: the uploader may claim again. */
  settled: ClockJudgement;
}

/** A step as people read it: signed seconds (one decimal) and when (ISO). */
export function stepView(step: ClockStep | null): { sizeSec: number; at: string } | null {
  return step ? { sizeSec: Math.round(step.sizeMs / 100) / 10, at: new Date(step.at).toISOString() } : null;
}

export class TimeAuthority extends TypedEmitter<TimeAuthorityEvents> implements PunchClock {
  readonly #o: TimeAuthorityOptions;
  readonly #wall: () => number;
  readonly #mono: () => number;
  readonly #boot: () => string;
  readonly #stepMs: number;
  #store: ClockStore | null = null;
  #judgement: ClockJudgement | null = null;
  #lastTrustedMs: number | null = null;
  /** The last tick's readings: the next is compared with them. */
  #last: { wall: number; mono: number } | null = null;
  /** This boot's latest trusted readings (kept through a step, to correct from after a power cut). */
  #anchor: { wall: number; mono: number } | null = null;
  /** True from a step (or the start) until the judgement after it finished. */
  #settling = true;
  #checking: Promise<ClockJudgement> | null = null;
  #again = false;
  #lastCheckMono = -Infinity;
  #lastWriteMono = -Infinity;
  /** Something to write at the next judgement: a step, an untrusted punch recorded while trusted, a failed write. */
  #dirty = false;
  readonly #pendingSteps: ClockStep[] = [];
  #steps = 0;
  #lastStep: ClockStep | null = null;
  #corrected = 0;
  #released = 0;
  #syncs = 0;
  #timer: NodeJS.Timeout | null = null;
  #stopped = true;

  /** The authority of a terminal: sources, step threshold and earlier-boot rule from `config.clock`. */
  static fromConfig(
    config: AgentConfig,
    db: SqliteDatabase,
    outbox: TimeAuthorityOptions['outbox'],
    extra: Partial<TimeAuthorityOptions> = {},
  ): TimeAuthority {
    return new TimeAuthority({
      db,
      outbox,
      sources: clockSources(config.clock.sources),
      stepThresholdMs: config.clock.stepThresholdSec * 1000,
      earlierBootPunches: config.clock.earlierBootPunches,
      ...extra,
    });
  }

  constructor(options: TimeAuthorityOptions) {
    super();
    this.#o = options;
    this.#wall = options.wallNow ?? wallClock();
    this.#mono = options.monoNow ?? monotonicMs;
    this.#boot = options.bootId ?? currentBootId;
    this.#stepMs = options.stepThresholdMs ?? 2000;
  }

  /**
   * Loads what the terminal remembers, judges the clock once (correcting what it can), then, with
   * `tick` (the daemon), keeps watching. A CLI command passes `tick: false`.
   */
  async start(options: { tick?: boolean } = {}): Promise<void> {
    this.#store ??= await ClockStore.open(this.#o.db);
    const rec = await this.#store.read();
    this.#lastTrustedMs = rec.lastTrustedMs;
    this.#steps = rec.steps;
    this.#lastStep = rec.lastStep;
    const wall = this.#wall();
    const mono = this.#mono();
    // A step while no agent watched: this boot's last trusted reading no longer fits the clock.
    // (The daemon's to count: a CLI command beside it would count the same step again.)
    const anchor = options.tick === false ? undefined : (await this.#store.anchors()).get(this.#boot());
    if (anchor) this.#noteDeviation(wall - (anchor.wallMs + (mono - anchor.monoMs)), wall, 'while the agent was not running');
    this.#last = { wall, mono };
    this.#stopped = false;
    await this.check();
    if (options.tick !== false) this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#checking?.catch(() => undefined);
    // Remember the latest trusted time (and a step just seen) for the next start.
    if (!this.#store || !this.#judgement) return;
    this.#observe();
    if ((this.#judgement.trusted || this.#pendingSteps.length) && this.#last) await this.#write(false, this.#last).catch(() => undefined);
  }

  /** The uploader's gate: closed until the first judgement, and while a step is being judged. */
  open(): boolean {
    return !this.#stopped && !this.#settling;
  }

  isTrusted(): boolean {
    return this.#judgement?.trusted === true && !this.#settling;
  }

  judgement(): ClockJudgement | null {
    return this.#judgement;
  }

  lastTrustedMs(): number | null {
    return this.#lastTrustedMs;
  }

  /** The wall clock as the authority reads it. */
  wallNow(): number {
    return this.#wall();
  }

  /**
   * The moment of a punch. Trusted only when the clock is trusted, no step is being judged, and
   * the clock has not moved against the monotonic clock since the last tick (a step just now is
   * caught here, before the next tick).
   */
  stamp(): PunchStamp {
    const wall = this.#wall();
    const mono = this.#mono();
    let trusted = this.isTrusted();
    if (this.#last && Math.abs(wall - this.#last.wall - (mono - this.#last.mono)) > this.#stepMs) {
      trusted = false;
      setImmediate(() => this.#tick());
    }
    if (
      trusted &&
      (new Date(wall).getUTCFullYear() < MIN_PLAUSIBLE_YEAR || (this.#lastTrustedMs !== null && wall < this.#lastTrustedMs - this.#stepMs))
    )
      trusted = false;
    return { wallMs: wall, monoMs: mono, bootId: this.#boot(), trusted };
  }

  /** A punch was recorded: one stamped untrusted while the clock is trusted (a race) is corrected at once. */
  recorded(stamp: PunchStamp): void {
    if (!stamp.trusted && this.#judgement?.trusted && !this.#stopped) {
      this.#dirty = true;
      void this.check().catch(() => undefined);
    }
  }

  metrics(): ClockMetrics {
    const j = this.#judgement;
    return {
      clockSynchronized: this.isTrusted(),
      clockSource: j?.source ?? 'unknown',
      correctedPunches: this.#corrected,
      synchronizations: this.#syncs,
      clockTrusted: this.isTrusted(),
      clockDetail: j?.detail ?? 'not judged yet',
      lastTrustedAt: this.#lastTrustedMs === null ? null : new Date(this.#lastTrustedMs).toISOString(),
      clockSteps: this.#steps,
      lastStep: stepView(this.#lastStep),
      releasedPunches: this.#released,
    };
  }

  /** Judges the clock now (concurrent calls share one judgement; a call during one runs another after it). */
  check(): Promise<ClockJudgement> {
    if (this.#checking) {
      this.#again = true;
      return this.#checking;
    }
    this.#checking = this.#check().finally(() => {
      this.#checking = null;
      if (this.#again && !this.#stopped) {
        this.#again = false;
        void this.check().catch(() => undefined);
      }
    });
    return this.#checking;
  }

  async #check(): Promise<ClockJudgement> {
    const detect = this.#o.detect ?? ((wallMs: number) => detectClock({ now: wallMs, sources: this.#o.sources ?? DEFAULT_SOURCES }));
    let state: ClockState;
    try {
      state = await detect(this.#wall());
    } catch (err) {
      state = { synchronized: false, source: 'error', detail: `the time sources could not be asked: ${(err as Error).message}` };
    }
    const wall = this.#wall();
    const mono = this.#mono();
    const next = judgeClock(state, wall, this.#lastTrustedMs, this.#stepMs);
    const prev = this.#judgement;
    this.#lastCheckMono = mono;
    const changed = !prev || prev.trusted !== next.trusted;
    if (changed) {
      if (next.trusted) log.info({ source: next.source }, `clock trusted: ${next.detail}`);
      else
        log.warn({ source: next.source }, `clock not trusted: ${next.detail}; punches are marked and held until their time is corrected`);
    }
    if (prev && !prev.trusted && next.trusted) this.#syncs++;
    this.#judgement = next;
    if (next.trusted) {
      this.#lastTrustedMs = Math.max(this.#lastTrustedMs ?? wall, wall);
      this.#anchor = { wall, mono };
    }
    // Write on the first judgement, on a change, while trusted once a minute, and when asked.
    if (
      !prev ||
      changed ||
      this.#dirty ||
      this.#pendingSteps.length ||
      (next.trusted && mono - this.#lastWriteMono >= (this.#o.syncedIntervalMs ?? 60_000))
    ) {
      try {
        await this.#write(true, { wall, mono });
      } catch (err) {
        this.#dirty = true;
        log.error({ err }, 'could not record the clock state and correct the punches; tried again at the next check');
      }
    }
    this.#settling = false;
    if (changed) this.emit('change', next);
    this.emit('settled', next);
    return next;
  }

  /**
   * One transaction: the judgement, this boot's anchor (while trusted), the steps seen, and the
   * corrections (and releases, by the configured rule) that follow from them.
   */
  async #write(correct: boolean, at: { wall: number; mono: number }): Promise<void> {
    const store = this.#store!;
    const j = this.#judgement!;
    const boot = this.#boot();
    const steps = this.#pendingSteps.splice(0);
    const anchor = this.#anchor;
    const { corrected, released } = await this.#o.db
      .transaction(async (db) => {
        for (const s of steps) await store.recordStep(db, s);
        if (anchor) await store.writeAnchor(db, { bootId: boot, wallMs: anchor.wall, monoMs: anchor.mono });
        await store.writeJudgement(db, {
          trusted: j.trusted,
          source: j.source,
          detail: j.detail,
          bootId: boot,
          monoMs: at.mono,
          lastTrustedMs: this.#lastTrustedMs,
        });
        if (!correct) return { corrected: 0, released: 0 };
        const anchors = await store.anchors(db);
        // This boot's punches wait for the clock to be trusted; earlier boots' go by their own anchor.
        if (!j.trusted) anchors.delete(boot);
        const n = await this.#o.outbox.correctWithin(db, anchors);
        await store.addCorrected(db, n);
        const r = this.#o.earlierBootPunches === 'send' ? await this.#o.outbox.releaseWithin(db, { exceptBoot: boot }) : 0;
        await store.pruneAnchors(db, [boot, ...(await this.#o.outbox.heldBoots(db))]);
        return { corrected: n, released: r };
      })
      .catch((err: unknown) => {
        this.#pendingSteps.unshift(...steps);
        throw err;
      });
    this.#dirty = false;
    this.#lastWriteMono = at.mono;
    if (corrected > 0) {
      this.#corrected += corrected;
      log.info(
        { count: corrected },
        `corrected the time of ${corrected} punch(es) taken while the clock was not trusted, from the monotonic clock`,
      );
      this.emit('corrected', { count: corrected });
    }
    if (released > 0) {
      this.#released += released;
      log.warn(
        { count: released },
        `sent ${released} punch(es) of an earlier boot as they are (clock.earlierBootPunches: send); they stay marked`,
      );
      this.emit('released', { count: released });
    }
  }

  /** A difference between the wall and the monotonic clock beyond the threshold is a step. */
  #noteDeviation(deviationMs: number, wall: number, when: string): boolean {
    if (Math.abs(deviationMs) <= this.#stepMs) return false;
    const step: ClockStep = { sizeMs: Math.round(deviationMs), at: wall, bootId: this.#boot() };
    this.#steps++;
    this.#lastStep = step;
    this.#pendingSteps.push(step);
    this.#settling = true;
    log.warn(
      { sizeMs: step.sizeMs, from: new Date(wall - deviationMs).toISOString(), to: new Date(wall).toISOString() },
      `the wall clock stepped ${deviationMs > 0 ? 'forward' : 'back'} by ${Math.abs(Math.round(deviationMs / 1000))} s against the monotonic clock${when ? ` ${when}` : ''}`,
    );
    this.emit('step', step);
    return true;
  }

  /**
   * Reads both clocks: a step is noted (true); otherwise, while trusted, the reading becomes the
   * latest trusted time and this boot's anchor.
   */
  #observe(): boolean {
    const wall = this.#wall();
    const mono = this.#mono();
    const prev = this.#last;
    this.#last = { wall, mono };
    if (prev && this.#noteDeviation(wall - prev.wall - (mono - prev.mono), wall, '')) return true;
    if (this.#judgement?.trusted && !this.#settling) {
      this.#lastTrustedMs = Math.max(this.#lastTrustedMs ?? wall, wall);
      this.#anchor = { wall, mono };
    }
    return false;
  }

  #tick(): void {
    if (this.#stopped) return;
    if (this.#observe()) {
      void this.check().catch(() => undefined);
      return;
    }
    const j = this.#judgement;
    if (!j || this.#settling) return;
    const wall = this.#last!.wall;
    const mono = this.#last!.mono;
    const interval = j.trusted ? (this.#o.syncedIntervalMs ?? 60_000) : (this.#o.unsyncedIntervalMs ?? 5_000);
    // Untrusted because it was behind a trusted time, and now it has passed it: judge at once.
    const caughtUp = !j.trusted && j.source === 'seen' && this.#lastTrustedMs !== null && wall >= this.#lastTrustedMs - this.#stepMs;
    if (caughtUp || this.#dirty || mono - this.#lastCheckMono >= interval) void this.check().catch(() => undefined);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick();
      this.#schedule();
    }, this.#o.tickMs ?? 1000);
    this.#timer.unref();
  }
}

/**
 * A person's decision (`edge-agent queue release-unsynced`): punches of earlier boots that the
 * clock cannot correct are sent as they are, marked. Whatever an anchor can still correct is
 * corrected first, in the same transaction. With `all`, this boot's held punches too (a clock
 * that will not be trusted soon). Works beside a running daemon.
 */
export async function releaseUnsynced(
  db: SqliteDatabase,
  outbox: Pick<Outbox, 'correctWithin' | 'releaseWithin' | 'heldBoots'>,
  options: { ids?: readonly string[]; all?: boolean; bootId?: string } = {},
): Promise<{ released: number; corrected: number }> {
  const store = await ClockStore.open(db);
  const boot = options.bootId ?? currentBootId();
  return db.transaction(async (tx) => {
    const anchors: Map<string, ClockAnchor> = await store.anchors(tx);
    if (!options.all) anchors.delete(boot);
    const corrected = await outbox.correctWithin(tx, anchors);
    await store.addCorrected(tx, corrected);
    const released = await outbox.releaseWithin(tx, {
      exceptBoot: options.all ? null : boot,
      ...(options.ids ? { ids: options.ids } : {}),
    });
    return { released, corrected };
  });
}
