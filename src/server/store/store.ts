/**
 * The one storage interface of the attendance service. The handlers (users, biometrics, events,
 * report, auth) decide what a request means and which status each item gets; a store only keeps
 * rows. Two implementations pass the same contract suite (test/unit/server/store/store.test.ts):
 *
 * - `SqliteStore` (sqlite-store.ts): one file, one connection, `BEGIN IMMEDIATE` transactions. A
 *   small site's service and the agent's embedded default.
 * - `PgStore` (pg-store.ts): PostgreSQL through a `pg` pool, for several `serve` replicas on one
 *   database. Correct together without any lock inside a process: an event's identity is a
 *   unique key written with `INSERT … ON CONFLICT`, an employee's check-outs and enrolments are
 *   serialized by a transaction-scoped advisory lock, and a transaction that loses a race
 *   (serialization failure, deadlock, unique violation) is run again from the start.
 *
 * Rows use the column names of the tables (snake_case); the handlers map them to the wire.
 */
import type { Role } from '../roles.js';

export interface UserRow {
  employee_code: string;
  first_name: string;
  last_name: string;
  email: string | null;
  login_name: string | null;
  status: string;
  group_code: string | null;
}

export interface NewUser extends UserRow {
  password_hash: string | null;
}

/** What an update may change: never the loginName or the password. */
export type UserUpdate = Pick<UserRow, 'first_name' | 'last_name' | 'email' | 'status' | 'group_code'>;

export interface EventRow {
  id: number;
  employee_code: string;
  in_time: string;
  out_time: string | null;
  shift: string;
  tz_offset: number;
}

/** A check-in (with its check-out when known) to insert or, when its identity exists, to update. */
export interface EventUpsert {
  employeeCode: string;
  inTime: string;
  outTime: string | null;
  /** The check-in as UTC milliseconds (for "latest open check-in before"). */
  inUtc: number;
  shift: string;
  /** The shift was named in the request (a replay without one keeps the stored shift). */
  shiftGiven: boolean;
  tzMinutes: number;
}

/** An event with its employee's names and group, for the work-hour report. */
export interface ReportRow {
  employee_code: string;
  in_time: string;
  out_time: string | null;
  shift: string;
  tz_offset: number;
  first_name: string;
  last_name: string;
  group_code: string | null;
}

export interface NewBiometric {
  employeeCode: string;
  modality: string;
  digest: string;
  sealedImage: Buffer | null;
  sealedTemplate: Buffer | null;
  createdAt: string;
}

/** The outcome of `attempt`: the value, or the database's refusal of just that work. */
export type Attempt<T> = { value: T } | { refused: Error };

/** An API key as `edge-agent keys list` shows it (never its secret, which is only a hash here). */
export interface ApiKeyInfo {
  apiKey: string;
  role: Role;
  createdAt: string;
  /** Access tokens of this key that have not expired. */
  activeTokens: number;
}

/** What can be done inside a transaction (and, for reads and single writes, outside one). */
export interface StoreOps {
  // ---- API keys and tokens ----
  insertApiKey(apiKey: string, secretHash: string, role: Role, createdAt: string): Promise<void>;
  apiKey(apiKey: string): Promise<{ secretHash: string; role: Role } | undefined>;
  /** Stores a token's hash; tokens expired before `nowMs` are deleted on the way. */
  insertToken(tokenHash: string, apiKey: string, role: Role, expiresAtMs: number, nowMs: number): Promise<void>;
  token(tokenHash: string): Promise<{ role: Role; expiresAtMs: number } | undefined>;
  deleteTokens(): Promise<void>;
  /** Every key with its tokens not expired at `nowMs`, by creation time (then key). */
  apiKeys(nowMs: number): Promise<ApiKeyInfo[]>;
  /** Deletes a key and its tokens; false when there is no such key. */
  deleteApiKey(apiKey: string): Promise<boolean>;

  // ---- users ----
  user(code: string): Promise<UserRow | undefined>;
  userCodeByLogin(loginName: string): Promise<string | undefined>;
  insertUser(user: NewUser, now: string): Promise<void>;
  updateUser(code: string, fields: UserUpdate, now: string): Promise<void>;
  /** Deletes the user and their biometric records (their events stay). */
  deleteUser(code: string): Promise<void>;
  /** Which of `codes` are users. */
  knownUsers(codes: readonly string[]): Promise<Set<string>>;
  /** True when `code` is a user or has events (a deleted user's events can still be read and deleted). */
  employeeKnown(code: string): Promise<boolean>;

  // ---- biometrics ----
  hasBiometric(code: string, modality: string, digest: string): Promise<boolean>;
  countBiometrics(code: string, modality: string): Promise<number>;
  insertBiometric(record: NewBiometric): Promise<void>;
  /** Deletes every record of the employee; returns how many there were. */
  deleteBiometrics(code: string): Promise<number>;

  // ---- events ----
  /**
   * Inserts or updates check-ins by identity (employeeCode, inTime), in one statement; the
   * identities must be distinct. An update keeps an outTime it is not given, and the stored shift
   * when the new one was not named. Returns the stored rows (in any order).
   */
  upsertEvents(events: readonly EventUpsert[], now: string): Promise<EventRow[]>;
  /** The event of `code` already closed with exactly this outTime (latest check-in first). */
  eventClosedAt(code: string, outTime: string): Promise<EventRow | undefined>;
  /** The id of the latest open event of `code` whose check-in is not after `outUtc`. */
  latestOpenEvent(code: string, outUtc: number): Promise<number | undefined>;
  /** Closes event `id` if it is still open; `undefined` when someone closed it meanwhile. */
  closeEvent(id: number, outTime: string, now: string): Promise<EventRow | undefined>;
  eventAt(code: string, inTime: string): Promise<EventRow | undefined>;
  deleteEvent(id: number): Promise<void>;
  /** Events with inTime in [from, to], by inTime (then employee); at most `limit` rows. */
  events(range: { code: string | null; from: string; to: string; limit: number }): Promise<EventRow[]>;
  /** Events with inTime in [from, to] joined with their (existing) users, by employee and inTime. */
  reportRows(from: string, to: string): Promise<ReportRow[]>;

  // ---- concurrency ----
  /**
   * Serializes this transaction with every other one that locks one of `codes` (on any replica),
   * until it ends. SQLite: nothing to do (one writer at a time already).
   */
  lockEmployees(codes: readonly string[]): Promise<void>;
  /**
   * Runs `fn` so that the database refusing it (a constraint, a trigger) undoes only what `fn`
   * did and comes back as `{refused}`, leaving the transaction usable; other errors are thrown.
   */
  attempt<T>(fn: () => Promise<T>): Promise<Attempt<T>>;
}

export interface ServiceStore extends StoreOps {
  readonly kind: 'sqlite' | 'postgres';
  /** Where the data is, fit for a log line (a URL without its password). */
  readonly where: string;
  /**
   * Runs `fn` in one transaction and resolves after the commit. It may run `fn` more than once
   * (a lost race between replicas): `fn` must do nothing outside `tx` that cannot be repeated.
   */
  transaction<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T>;
  /**
   * Records the check value of the biometric key on first use and compares it afterwards:
   * false when the records of this database were sealed under another key.
   */
  sameBiometricKey(check: string): Promise<boolean>;
  close(): Promise<void>;
}

/** True for `postgres://` and `postgresql://` URLs. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}
