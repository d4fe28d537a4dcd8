/**
 * The outbox's vocabulary: what a caller records (`PunchInput`), what it reads back (`OutboxEvent`,
 * `ListedEvent`, `OutboxStatus`), what the uploader hands to a sink and applies (`OutboxItem`,
 * `ItemResult`), and the shared state every concern module of the outbox works on
 * (`OutboxContext`). Types only, besides the constants they name.
 *
 * Types only. Tested in test/unit/store/outbox/recording.test.ts,
 * test/unit/store/outbox/delivery.test.ts and test/unit/store/outbox/queries.test.ts (the outbox's
 * concerns that speak it).
 */
import type { SqliteDatabase } from '../../core/sqlite.js';

export type Direction = 'in' | 'out';
/**
 * What a punch came from: a finger, an eye, a badge, a badge then a finger or an eye (the policy
 * asked for both), or a person's manual entry.
 */
export const PUNCH_SOURCES = ['finger', 'iris', 'badge', 'badge+finger', 'badge+iris', 'manual'] as const;
export type PunchSource = (typeof PUNCH_SOURCES)[number];
export type EventState = 'pending' | 'dead' | 'delivered';
/** Where a punch's time came from: the terminal's clock, or a person (`punch --at`, an import). */
export type TimeSource = 'clock' | 'manual';

/** Dead-letter status of a check-out found before its check-in (held for a person's review). */
export const CLOCK_ORDER_STATUS = 'CLOCK_ORDER';

/** What a caller records. Clock fields default to "synchronized, this boot, now". */
export interface PunchInput {
  employeeCode: string;
  direction: Direction;
  /** Local time `yyyy-MM-dd HH:mm:ss`. */
  localTime: string;
  /** Minutes east of UTC. */
  tzOffset: number;
  /** For a check-out: the local time of the check-in it closes, when known. */
  inTime?: string | null;
  /** For a check-out: the id of the check-in it closes, when known. */
  inId?: string | null;
  shift?: string | null;
  source: PunchSource;
  score?: number | null;
  terminalId: string;
  /** UTC ms; default now. */
  createdAt?: number;
  clockSynced?: boolean;
  bootId?: string;
  monotonicMs?: number;
  /** Default `clock`; `manual` for a time a person gave. */
  timeSource?: TimeSource;
  /**
   * The punch's id when the caller derives a stable one (an import: `derivedUlid`); default a new
   * ULID. A punch whose id is already recorded is skipped, not recorded twice.
   */
  id?: string;
}

/** One recorded punch as read back. */
export interface OutboxEvent {
  seq: number;
  id: string;
  employeeCode: string;
  direction: Direction;
  localTime: string;
  tzOffset: number;
  inTime: string | null;
  inId: string | null;
  shift: string | null;
  source: PunchSource;
  score: number | null;
  terminalId: string;
  createdAt: number;
  clockSynced: boolean;
  clockCorrected: boolean;
  /** Taken with an untrusted clock and sent as it is by a person's decision (queue release-unsynced). */
  clockReleased: boolean;
  timeSource: TimeSource;
  bootId: string;
  monotonicMs: number;
  state: EventState;
}

/** A punch handed to a sink, with that sink's attempt count. */
export interface OutboxItem extends OutboxEvent {
  attempts: number;
}

export interface DeliveryInfo {
  sink: string;
  state: EventState;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: string | null;
  lastError: string | null;
  deliveredAt: number | null;
}

export interface ListedEvent extends OutboxEvent {
  deliveries: DeliveryInfo[];
}

export interface OutboxStatus {
  pending: number;
  dead: number;
  delivered: number;
  /** Age of the oldest pending punch in seconds (by its recording time), null when none. */
  oldestPendingAgeSec: number | null;
  /** ISO time of the last delivery, null when nothing was delivered yet. */
  lastDeliveryAt: string | null;
  /** Pending punches taken before the clock synchronized and not corrected yet. */
  unsynced: number;
  maxPending: number;
  /** What the cap counts: pending + dead punches. */
  undelivered: number;
  /** How full the outbox is: undelivered / maxPending, in percent (one decimal). */
  capFullPercent: number;
  /** Punches that can still be recorded before the cap refuses them. */
  capRoom: number;
  perSink: Record<string, { pending: number; dead: number }>;
  /** The unsynced punches by what they wait for. */
  held: HeldStatus;
}

export interface HeldStatus {
  /** Waiting for trusted time on this boot (or on an earlier boot with a trusted reading to correct them from). */
  clock: number;
  /** Of an earlier boot without any trusted reading (no monotonic link): waiting for a person's decision. */
  earlierBoot: number;
  /** How long the oldest punch of this boot has waited, on the monotonic clock; null when none. */
  oldestClockSec: number | null;
  /** Check-outs found before their check-in: dead letters with status CLOCK_ORDER, for review. */
  review: number;
}

export interface OutboxOptions {
  /** Sinks each new punch must reach (config `upstream`). Default `['api']`. */
  sinks?: string[];
  /** Pending + dead punches at which new punches are refused. Default `DEFAULT_MAX_PENDING`. */
  maxPending?: number;
  now?: () => number;
}

/** A trusted (wall, monotonic) reading of one boot: the base for correcting that boot's punches. */
export interface CorrectionAnchor {
  wallMs: number;
  monoMs: number;
}

/** Outcome of one item at one sink, as the uploader applies it. */
export type ItemResult =
  | { seq: number; outcome: 'delivered' }
  | { seq: number; outcome: 'dead'; status: string; error: string }
  | { seq: number; outcome: 'retry'; status?: string | null; error: string; nextAttemptAt: number };

/** A month of a busy gate (thousands of punches a day for weeks of outage) with room to spare. */
export const DEFAULT_MAX_PENDING = 1_000_000;

/**
 * What the concern modules of the outbox (recording, queries, clock-hold, delivery) share: the
 * database, the configured sinks, the cap and the clock, as the `Outbox` facade holds them.
 */
export interface OutboxContext {
  readonly db: SqliteDatabase;
  readonly sinks: readonly string[];
  readonly maxPending: number;
  readonly now: () => number;
  /** This process records for another sink set than the deliveries were last reconciled with. */
  otherSinks: boolean;
}
