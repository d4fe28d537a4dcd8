/**
 * The punch policy: what a recognized person (or a manual entry) becomes in the outbox.
 *
 * - Direction: terminal mode `in` or `out` fixes it; `toggle` closes the person's open check-in
 *   (the person's latest punch is a check-in, at most `maxShiftHours` old and taken on the same
 *   working day, a working day starting at `dayBoundary` local time) or else opens a new one.
 *   An explicit direction (`--in`/`--out`) wins over the mode.
 * - A check-out carries the inTime of the check-in it closes when the terminal has that
 *   check-in (within `maxShiftHours`), so the service can match the event by its identity.
 * - Dedupe: the same person again within `dedupeWindowSec` records nothing and says so
 *   (`{recorded: false, reason: 'duplicate'}`), unless the second punch explicitly asks for the
 *   other direction.
 * - Time: local time in the terminal's time zone (`terminal.timeZone`) with its offset in
 *   minutes east of UTC. The moment comes from the time authority (`clock.stamp()`: wall clock,
 *   monotonic clock, boot, trusted or not); an untrusted punch is recorded as such and held until
 *   its time is corrected. A punch given an explicit time (`at`) is a person's statement: marked
 *   `timeSource: manual`, not held, and refused when it lies in the future of a trusted clock.
 * - Elapsed time since the person's last punch (dedupe, closing a check-in) is measured on the
 *   monotonic clock when both punches were stamped on this boot, so a step of the wall clock
 *   never makes an open check-in look old, or "in the future" and so not open. Across boots it
 *   comes from the wall clock when both times are known, else it is bounded below by the latest
 *   trusted time (a check-in that may still be open is closed rather than a second one opened).
 * - What a person must present (`policy.require`, applied by `present`, the scanners' way in):
 *   `either` a finger, an eye or a badge punches; `biometric` only a finger or an eye (a badge is
 *   not accepted); `badge` only a badge; `both` a badge, then the same person's finger or eye
 *   within `policy.bothWithinSec` seconds (the badge alone records nothing and asks for the
 *   second factor; a finger without a badge before it is not accepted), recorded with source
 *   `badge+finger` or `badge+iris`. A manual punch (`punch`) is a person's statement and not
 *   subject to it.
 */
import { checkEmployeeCode, EMPLOYEE_CODE_RULE } from '../api/employee-code.js';
import { AgentError } from '../core/errors.js';
import type { ScannerModality } from '../core/modality.js';
import { monotonicMs } from '../core/time.js';
import { formatLocal, LOCAL_TIME_RE, parseLocal, zoneOffsetMinutes } from '../store/local-time.js';
import type { Direction, Outbox, OutboxEvent, PunchSource, TimeSource } from '../store/outbox.js';
import type { AgentConfig } from '../config/config.js';

export type TerminalMode = 'in' | 'out' | 'toggle';

export interface PunchRequest {
  employeeCode: string;
  source: PunchSource;
  score?: number | null;
  /** When the punch happened: a Date, or a local time `yyyy-MM-dd HH:mm:ss`. Default now. */
  at?: Date | string;
  /** Minutes east of UTC; default the terminal zone's offset at that time. */
  tzOffset?: number;
  direction?: Direction;
}

export type PunchResult =
  | {
      recorded: true;
      id: string;
      direction: Direction;
      localTime: string;
      tzOffset: number;
      inTime?: string;
      clockTrusted: boolean;
      timeSource: TimeSource;
    }
  | { recorded: false; reason: 'duplicate'; previousId: string; secondsAgo: number };

/** What a person must present to punch (config `policy.require`). */
export type CredentialRule = 'either' | 'biometric' | 'badge' | 'both';

/** What a scanner read: a recognized finger, eye or badge. */
export interface Presentation {
  employeeCode: string;
  source: ScannerModality;
  score?: number | null;
}

/** A presentation's outcome: a punch (or a duplicate), or what the rule said instead. */
export type PresentResult =
  | PunchResult
  | { recorded: false; reason: 'awaiting'; awaiting: 'biometric'; withinSec: number }
  | { recorded: false; reason: 'not-accepted'; detail: string };

/** Badges waiting for their second factor at most (older ones are forgotten first). */
const MAX_AWAITING = 1000;

/** The moment of a punch as the time authority gives it. */
export interface PunchStamp {
  wallMs: number;
  monoMs: number;
  bootId: string;
  /** Whether the wall clock reading can be trusted now. */
  trusted: boolean;
}

/** The time authority as the policy sees it (time-authority.ts). */
export interface PunchClock {
  stamp(): PunchStamp;
  /** The latest time already trusted on this terminal (a lower bound of the true time), null when none. */
  lastTrustedMs(): number | null;
  /** Told after a punch was recorded with `stamp`. */
  recorded?(stamp: PunchStamp): void;
}

/** A manual time this far after a trusted clock is refused as being in the future. */
const FUTURE_SLACK_MS = 60_000;

export interface PunchPolicyOptions {
  outbox: Outbox;
  terminalId: string;
  mode: TerminalMode;
  timeZone: string;
  dedupeWindowSec: number;
  /** `HH:MM` local time at which a new working day starts. */
  dayBoundary: string;
  maxShiftHours: number;
  shift?: string | null;
  /** The time authority: every punch's moment and whether it can be trusted. */
  clock: PunchClock;
  /** What a person must present (default `either`). */
  require?: CredentialRule;
  /** `both`: how long after the badge the finger or eye may come (s, default 15). */
  bothWithinSec?: number;
  /** Monotonic milliseconds (tests). */
  monoNow?: () => number;
}

/** Time since the person's last punch: exact, a lower bound (untrusted now), or unknown. */
type Elapsed = { ms: number; exact: boolean } | null;

export class PunchPolicy {
  readonly #o: PunchPolicyOptions;
  readonly #boundaryMin: number;
  /** `both`: employee code → until when (monotonic ms) their badge waits for the second factor. */
  readonly #awaiting = new Map<string, number>();

  constructor(options: PunchPolicyOptions) {
    this.#o = options;
    const m = /^(\d{2}):(\d{2})$/.exec(options.dayBoundary);
    if (!m)
      throw new AgentError(
        'CONFIG_INVALID',
        `policy.dayBoundary "${options.dayBoundary}" is not HH:MM`,
        { key: 'policy.dayBoundary' },
        { hint: 'write it as 04:00' },
      );
    this.#boundaryMin = Number(m[1]) * 60 + Number(m[2]);
    zoneOffsetMinutes(options.timeZone, Date.now()); // fails early on an unknown zone
  }

  static fromConfig(config: AgentConfig, outbox: Outbox, clock: PunchClock): PunchPolicy {
    return new PunchPolicy({
      outbox,
      terminalId: config.terminal.id,
      mode: config.terminal.mode,
      timeZone: config.terminal.timeZone,
      dedupeWindowSec: config.policy.dedupeWindowSec,
      dayBoundary: config.policy.dayBoundary,
      maxShiftHours: config.policy.maxShiftHours,
      shift: config.policy.shift,
      clock,
      require: config.policy.require,
      bothWithinSec: config.policy.bothWithinSec,
    });
  }

  /**
   * A scanner's recognition under the credential rule (`policy.require`): punched (or a
   * duplicate), awaiting the second factor, or not accepted. See the module comment.
   */
  async present(p: Presentation): Promise<PresentResult> {
    const rule = this.#o.require ?? 'either';
    const badge = p.source === 'badge';
    const punch = (source: PunchSource) => this.punch({ employeeCode: p.employeeCode, source, score: p.score ?? null });
    if (rule === 'either') return punch(p.source);
    if (rule === 'biometric')
      return badge
        ? { recorded: false, reason: 'not-accepted', detail: 'this terminal takes a finger or an eye, not a badge' }
        : punch(p.source);
    if (rule === 'badge')
      return badge ? punch('badge') : { recorded: false, reason: 'not-accepted', detail: 'this terminal takes badges only' };
    const withinSec = this.#o.bothWithinSec ?? 15;
    const now = (this.#o.monoNow ?? monotonicMs)();
    for (const [code, until] of this.#awaiting) if (until <= now) this.#awaiting.delete(code);
    const code = checkEmployeeCode(p.employeeCode.trim());
    const key = code.ok ? code.code : p.employeeCode;
    if (badge) {
      this.#awaiting.delete(key);
      this.#awaiting.set(key, now + withinSec * 1000);
      if (this.#awaiting.size > MAX_AWAITING) this.#awaiting.delete(this.#awaiting.keys().next().value!);
      return { recorded: false, reason: 'awaiting', awaiting: 'biometric', withinSec };
    }
    if (!this.#awaiting.has(key))
      return { recorded: false, reason: 'not-accepted', detail: `present the badge first, then the finger or eye within ${withinSec} s` };
    this.#awaiting.delete(key);
    return punch(p.source === 'finger' ? 'badge+finger' : 'badge+iris');
  }

  /** The working day of a local time: its date after moving the day start to `dayBoundary`. */
  #workingDay(local: string): string {
    const ms = parseLocal(local, 0) - this.#boundaryMin * 60_000;
    return formatLocal(ms, 0).slice(0, 10);
  }

  /** The latest punch of the person if it is a check-in still open after `elapsed`. */
  #openCheckIn(last: OutboxEvent | null, elapsed: Elapsed, local: string | null): OutboxEvent | null {
    if (last?.direction !== 'in') return null;
    // Unknown (the last punch's time is not known yet, or not this boot's): it may be open.
    if (elapsed === null) return last;
    if (elapsed.ms < 0 || elapsed.ms > this.#o.maxShiftHours * 3_600_000) return null;
    if (local !== null && this.#workingDay(last.localTime) !== this.#workingDay(local)) return null;
    return last;
  }

  /**
   * Time from the person's last punch to this one. This boot, both from the clock: the monotonic
   * clock says it exactly, however the wall clock stepped. Otherwise both times known (trusted,
   * corrected or typed): their difference. Now untrusted, the last one known: at least the time
   * from it to the latest trusted time. Else unknown.
   */
  #elapsed(last: OutboxEvent, stamp: PunchStamp, instant: number, explicit: boolean): Elapsed {
    if (!explicit && last.timeSource === 'clock' && last.bootId === stamp.bootId)
      return { ms: Math.max(0, stamp.monoMs - last.monotonicMs), exact: true };
    const lastKnown = last.clockSynced || last.clockCorrected;
    const lastAt = parseLocal(last.localTime, last.tzOffset);
    if (lastKnown && (explicit || stamp.trusted)) {
      // A clock-stamped punch "before" a known one is a clock that went back: it is not earlier.
      const ms = instant - lastAt;
      return { ms: explicit ? ms : Math.max(0, ms), exact: true };
    }
    const floor = this.#o.clock.lastTrustedMs();
    if (lastKnown && floor !== null) return { ms: Math.max(0, floor - lastAt), exact: false };
    return null;
  }

  /** Decides, records in the outbox (durably) and says what happened. */
  async punch(req: PunchRequest): Promise<PunchResult> {
    const given = typeof req.employeeCode === 'string' ? req.employeeCode.trim() : '';
    if (!given)
      throw new AgentError('POLICY_BAD_PUNCH', 'a punch needs an employee code', {}, { hint: 'give the employee code, e.g. --code 1042' });
    const checked = checkEmployeeCode(given);
    if (!checked.ok) throw new AgentError('POLICY_BAD_PUNCH', checked.problem, {}, { hint: `an employee code is ${EMPLOYEE_CODE_RULE}` });
    const code = checked.code;
    if (req.direction !== undefined && req.direction !== 'in' && req.direction !== 'out') {
      throw new AgentError(
        'POLICY_BAD_PUNCH',
        `direction "${String(req.direction)}" is not in or out`,
        { direction: req.direction },
        { hint: 'use in or out' },
      );
    }
    const stamp = this.#o.clock.stamp();
    let instant: number;
    let tzOffset: number;
    let localTime: string;
    const explicitTime = req.at !== undefined;
    if (typeof req.at === 'string') {
      if (!LOCAL_TIME_RE.test(req.at))
        throw new AgentError(
          'POLICY_BAD_TIME',
          `"${req.at}" is not a time of the form yyyy-MM-dd HH:mm:ss`,
          { at: req.at },
          { hint: 'write it as "2026-03-01 07:58:00"' },
        );
      tzOffset = req.tzOffset ?? zoneOffsetMinutes(this.#o.timeZone, parseLocal(req.at, 0));
      instant = parseLocal(req.at, tzOffset);
      localTime = req.at;
    } else {
      instant = req.at ? req.at.getTime() : stamp.wallMs;
      if (!Number.isFinite(instant))
        throw new AgentError('POLICY_BAD_TIME', 'the punch time is not a valid date', {}, { hint: 'pass a valid Date' });
      tzOffset = req.tzOffset ?? zoneOffsetMinutes(this.#o.timeZone, instant);
      localTime = formatLocal(instant, tzOffset);
    }
    if (explicitTime && stamp.trusted && instant > stamp.wallMs + FUTURE_SLACK_MS) {
      throw new AgentError(
        'POLICY_BAD_TIME',
        `${localTime} is in the future (the clock, trusted, says ${formatLocal(stamp.wallMs, tzOffset)})`,
        { at: localTime },
        { hint: 'give the time the punch really happened; leave out --at for now' },
      );
    }

    const last = await this.#o.outbox.lastForEmployee(code);
    const elapsed = last ? this.#elapsed(last, stamp, instant, explicitTime) : null;
    if (last && elapsed?.exact) {
      const sameAsAsked = req.direction === undefined || req.direction === last.direction;
      if (Math.abs(elapsed.ms) < this.#o.dedupeWindowSec * 1000 && sameAsAsked) {
        return { recorded: false, reason: 'duplicate', previousId: last.id, secondsAgo: Math.round(elapsed.ms / 1000) };
      }
    }
    // Now as a local time on the last punch's time line (for the working day), where both are known.
    const nowLocal =
      last && elapsed?.exact && (last.clockSynced || last.clockCorrected)
        ? formatLocal(parseLocal(last.localTime, last.tzOffset) + elapsed.ms, tzOffset)
        : null;

    let direction: Direction;
    let open: OutboxEvent | null;
    if (req.direction === undefined && this.#o.mode === 'toggle') {
      open = this.#openCheckIn(last, elapsed, nowLocal);
      direction = open ? 'out' : 'in';
    } else {
      direction = req.direction ?? (this.#o.mode === 'out' ? 'out' : 'in');
      open = direction === 'out' ? this.#openCheckIn(last, elapsed, null) : null;
    }

    const clockTrusted = explicitTime ? true : stamp.trusted;
    const timeSource: TimeSource = explicitTime ? 'manual' : 'clock';
    const { id } = await this.#o.outbox.record({
      employeeCode: code,
      direction,
      localTime,
      tzOffset,
      inTime: open?.localTime ?? null,
      inId: open?.id ?? null,
      shift: this.#o.shift ?? null,
      source: req.source,
      score: req.score ?? null,
      terminalId: this.#o.terminalId,
      createdAt: explicitTime ? stamp.wallMs : instant,
      clockSynced: clockTrusted,
      bootId: stamp.bootId,
      monotonicMs: stamp.monoMs,
      timeSource,
    });
    this.#o.clock.recorded?.(stamp);
    return { recorded: true, id, direction, localTime, tzOffset, ...(open ? { inTime: open.localTime } : {}), clockTrusted, timeSource };
  }
}
