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
 *   minutes east of UTC; the clock state comes from `clockSynced()` (the clock monitor). A punch
 *   given an explicit time (`at`) counts as synchronized: a person typed it.
 */
import { checkEmployeeCode, EMPLOYEE_CODE_RULE } from '../api/employee-code.js';
import { AgentError } from '../core/errors.js';
import { monotonicMs } from '../core/time.js';
import { currentBootId } from '../store/boot-id.js';
import { formatLocal, LOCAL_TIME_RE, parseLocal, zoneOffsetMinutes } from '../store/local-time.js';
import type { Direction, Outbox, OutboxEvent, PunchSource } from '../store/outbox.js';
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
  | { recorded: true; id: string; direction: Direction; localTime: string; tzOffset: number; inTime?: string }
  | { recorded: false; reason: 'duplicate'; previousId: string; secondsAgo: number };

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
  /** Whether the wall clock is synchronized now (the clock monitor); default: synchronized. */
  clockSynced?: () => boolean;
  now?: () => number;
}

export class PunchPolicy {
  readonly #o: PunchPolicyOptions;
  readonly #boundaryMin: number;
  #clockSynced: (() => boolean) | undefined;

  constructor(options: PunchPolicyOptions) {
    this.#o = options;
    this.#clockSynced = options.clockSynced;
    const m = /^(\d{2}):(\d{2})$/.exec(options.dayBoundary);
    if (!m) throw new AgentError('CONFIG_INVALID', `policy.dayBoundary "${options.dayBoundary}" is not HH:MM`, { key: 'policy.dayBoundary' }, { hint: 'write it as 04:00' });
    this.#boundaryMin = Number(m[1]) * 60 + Number(m[2]);
    zoneOffsetMinutes(options.timeZone, Date.now()); // fails early on an unknown zone
  }

  static fromConfig(config: AgentConfig, outbox: Outbox, extra: { clockSynced?: () => boolean; now?: () => number } = {}): PunchPolicy {
    return new PunchPolicy({
      outbox,
      terminalId: config.terminal.id,
      mode: config.terminal.mode,
      timeZone: config.terminal.timeZone,
      dedupeWindowSec: config.policy.dedupeWindowSec,
      dayBoundary: config.policy.dayBoundary,
      maxShiftHours: config.policy.maxShiftHours,
      shift: config.policy.shift,
      ...extra,
    });
  }

  /** Where the clock state comes from from now on (the clock monitor plugs in here). */
  setClockSource(clockSynced: () => boolean): void {
    this.#clockSynced = clockSynced;
  }

  /** The working day of a local time: its date after moving the day start to `dayBoundary`. */
  #workingDay(local: string): string {
    const ms = parseLocal(local, 0) - this.#boundaryMin * 60_000;
    return formatLocal(ms, 0).slice(0, 10);
  }

  /** The latest punch of the person if it is a check-in still open at `instant`. */
  #openCheckIn(last: OutboxEvent | null, instant: number, local: string, sameDay: boolean): OutboxEvent | null {
    if (!last || last.direction !== 'in') return null;
    const age = instant - parseLocal(last.localTime, last.tzOffset);
    if (age < 0 || age > this.#o.maxShiftHours * 3_600_000) return null;
    if (sameDay && this.#workingDay(last.localTime) !== this.#workingDay(local)) return null;
    return last;
  }

  /** Decides, records in the outbox (durably) and says what happened. */
  async punch(req: PunchRequest): Promise<PunchResult> {
    const given = typeof req.employeeCode === 'string' ? req.employeeCode.trim() : '';
    if (!given) throw new AgentError('POLICY_BAD_PUNCH', 'a punch needs an employee code', {}, { hint: 'give the employee code, e.g. --code 1042' });
    const checked = checkEmployeeCode(given);
    if (!checked.ok) throw new AgentError('POLICY_BAD_PUNCH', checked.problem, {}, { hint: `an employee code is ${EMPLOYEE_CODE_RULE}` });
    const code = checked.code;
    if (req.direction !== undefined && req.direction !== 'in' && req.direction !== 'out') {
      throw new AgentError('POLICY_BAD_PUNCH', `direction "${String(req.direction)}" is not in or out`, { direction: req.direction }, { hint: 'use in or out' });
    }
    let instant: number;
    let tzOffset: number;
    let localTime: string;
    const explicitTime = req.at !== undefined;
    if (typeof req.at === 'string') {
      if (!LOCAL_TIME_RE.test(req.at)) throw new AgentError('POLICY_BAD_TIME', `"${req.at}" is not a time of the form yyyy-MM-dd HH:mm:ss`, { at: req.at }, { hint: 'write it as "2026-03-01 07:58:00"' });
      tzOffset = req.tzOffset ?? zoneOffsetMinutes(this.#o.timeZone, parseLocal(req.at, 0));
      instant = parseLocal(req.at, tzOffset);
      localTime = req.at;
    } else {
      instant = req.at ? req.at.getTime() : (this.#o.now ?? Date.now)();
      if (!Number.isFinite(instant)) throw new AgentError('POLICY_BAD_TIME', 'the punch time is not a valid date', {}, { hint: 'pass a valid Date' });
      tzOffset = req.tzOffset ?? zoneOffsetMinutes(this.#o.timeZone, instant);
      localTime = formatLocal(instant, tzOffset);
    }

    const last = await this.#o.outbox.lastForEmployee(code);
    if (last) {
      const delta = instant - parseLocal(last.localTime, last.tzOffset);
      const sameAsAsked = req.direction === undefined || req.direction === last.direction;
      if (Math.abs(delta) < this.#o.dedupeWindowSec * 1000 && sameAsAsked) {
        return { recorded: false, reason: 'duplicate', previousId: last.id, secondsAgo: Math.round(delta / 1000) };
      }
    }

    let direction: Direction;
    let open: OutboxEvent | null;
    if (req.direction === undefined && this.#o.mode === 'toggle') {
      open = this.#openCheckIn(last, instant, localTime, true);
      direction = open ? 'out' : 'in';
    } else {
      direction = req.direction ?? (this.#o.mode === 'out' ? 'out' : 'in');
      open = direction === 'out' ? this.#openCheckIn(last, instant, localTime, false) : null;
    }

    const clockSynced = explicitTime ? true : (this.#clockSynced?.() ?? true);
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
      clockSynced,
      bootId: currentBootId(),
      monotonicMs: monotonicMs(),
    });
    return { recorded: true, id, direction, localTime, tzOffset, ...(open ? { inTime: open.localTime } : {}) };
  }
}
