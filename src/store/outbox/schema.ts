/**
 * The outbox's schema (component 'outbox' of the agent database) and the SQL every concern module
 * shares: the migrations, the connection's temporary table of batch outcomes, the condition of a
 * held punch, the event row and its mapping, and the rule that an event's state sums up its
 * deliveries (`refreshStates`).
 *
 * Two tables:
 * - `outbox_events`: one row per punch. `seq` (the rowid) is the order of recording and the
 *   order of delivery per employee; `id` is a ULID, the identity downstream (dedupe key on MQTT).
 *   `state` is the summary: `pending` (some sink still to deliver), `dead` (some sink refused it
 *   for good), `delivered` (every sink has it).
 * - `outbox_deliveries`: one row per punch and sink with its own state, attempts, next attempt
 *   time and last error.
 * `outbox_counts` keeps the number of events per state and `outbox_sink_counts` the number of
 * deliveries per sink and state, both maintained by triggers, so the size cap and `status()` cost
 * the same with ten rows or a million. `outbox_sinks` is the set of sinks the deliveries were last
 * reconciled with, so a start with an unchanged `upstream` does no work per row.
 *
 * Tested through the `Outbox` facade: test/unit/store/outbox/schema.test.ts (migrations of older
 * schemas) and test/unit/store/outbox.test.ts (the plans of the statements).
 */
import type { Migration, SqliteDatabase } from '../../core/sqlite.js';
import type { Direction, EventState, OutboxEvent, PunchSource, TimeSource } from './types.js';

export const OUTBOX_MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'outbox events, per-sink deliveries, state counters',
    up: `
      CREATE TABLE outbox_events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        employee_code TEXT NOT NULL,
        direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
        local_time TEXT NOT NULL,
        tz_offset INTEGER NOT NULL,
        in_time TEXT,
        in_id TEXT,
        shift TEXT,
        source TEXT NOT NULL,
        score REAL,
        terminal_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        clock_synced INTEGER NOT NULL,
        clock_corrected INTEGER NOT NULL DEFAULT 0,
        boot_id TEXT NOT NULL,
        monotonic_ms INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'dead', 'delivered')),
        done_at INTEGER
      );
      CREATE INDEX outbox_events_state ON outbox_events (state, seq);
      CREATE INDEX outbox_events_employee ON outbox_events (employee_code, seq);
      CREATE INDEX outbox_events_done ON outbox_events (done_at) WHERE done_at IS NOT NULL;
      CREATE INDEX outbox_events_unsynced ON outbox_events (boot_id) WHERE clock_synced = 0 AND clock_corrected = 0;
      CREATE TABLE outbox_deliveries (
        sink TEXT NOT NULL,
        seq INTEGER NOT NULL REFERENCES outbox_events (seq) ON DELETE CASCADE,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'dead', 'delivered')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL DEFAULT 0,
        last_status TEXT,
        last_error TEXT,
        delivered_at INTEGER,
        PRIMARY KEY (sink, seq)
      ) WITHOUT ROWID;
      CREATE INDEX outbox_deliveries_open ON outbox_deliveries (sink, state, seq);
      CREATE INDEX outbox_deliveries_seq ON outbox_deliveries (seq);
      CREATE TABLE outbox_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO outbox_counts (state, n) VALUES ('pending', 0), ('dead', 0), ('delivered', 0);
      CREATE TRIGGER outbox_events_count_insert AFTER INSERT ON outbox_events BEGIN
        UPDATE outbox_counts SET n = n + 1 WHERE state = NEW.state;
      END;
      CREATE TRIGGER outbox_events_count_update AFTER UPDATE OF state ON outbox_events WHEN OLD.state <> NEW.state BEGIN
        UPDATE outbox_counts SET n = n - 1 WHERE state = OLD.state;
        UPDATE outbox_counts SET n = n + 1 WHERE state = NEW.state;
      END;
      CREATE TRIGGER outbox_events_count_delete AFTER DELETE ON outbox_events BEGIN
        UPDATE outbox_counts SET n = n - 1 WHERE state = OLD.state;
      END;
    `,
  },
  {
    version: 2,
    description: 'time source of a punch, release of unsynced punches by decision',
    up: `
      ALTER TABLE outbox_events ADD COLUMN time_source TEXT NOT NULL DEFAULT 'clock' CHECK (time_source IN ('clock', 'manual'));
      ALTER TABLE outbox_events ADD COLUMN clock_released INTEGER NOT NULL DEFAULT 0;
      DROP INDEX outbox_events_unsynced;
      CREATE INDEX outbox_events_unsynced ON outbox_events (boot_id) WHERE clock_synced = 0 AND clock_corrected = 0 AND clock_released = 0;
    `,
  },
  {
    version: 3,
    description:
      'delivery counters per sink and state, the reconciled sink set, indexes of the check-outs kept back for review and of check-outs by their check-in',
    up: `
      CREATE TABLE outbox_sink_counts (sink TEXT NOT NULL, state TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (sink, state)) WITHOUT ROWID;
      INSERT INTO outbox_sink_counts (sink, state, n) SELECT sink, state, COUNT(*) FROM outbox_deliveries GROUP BY sink, state;
      CREATE TRIGGER outbox_deliveries_count_insert AFTER INSERT ON outbox_deliveries BEGIN
        INSERT INTO outbox_sink_counts (sink, state, n) VALUES (NEW.sink, NEW.state, 1) ON CONFLICT (sink, state) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER outbox_deliveries_count_update AFTER UPDATE OF state ON outbox_deliveries WHEN OLD.state <> NEW.state BEGIN
        UPDATE outbox_sink_counts SET n = n - 1 WHERE sink = OLD.sink AND state = OLD.state;
        INSERT INTO outbox_sink_counts (sink, state, n) VALUES (NEW.sink, NEW.state, 1) ON CONFLICT (sink, state) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER outbox_deliveries_count_delete AFTER DELETE ON outbox_deliveries BEGIN
        UPDATE outbox_sink_counts SET n = n - 1 WHERE sink = OLD.sink AND state = OLD.state;
      END;
      CREATE TABLE outbox_sinks (sink TEXT PRIMARY KEY) WITHOUT ROWID;
      CREATE INDEX outbox_deliveries_review ON outbox_deliveries (seq) WHERE state = 'dead' AND last_status = 'CLOCK_ORDER';
      CREATE INDEX outbox_events_in_id ON outbox_events (in_id) WHERE in_id IS NOT NULL;
    `,
  },
];

/**
 * Per-item outcomes of the batch being applied, on this connection only (a temporary table):
 * the dead and retry updates look their item up by seq instead of joining the backlog.
 */
export const OUTCOMES_TABLE = `CREATE TEMP TABLE IF NOT EXISTS outbox_outcomes (
  seq INTEGER PRIMARY KEY, dead INTEGER NOT NULL, status TEXT, error TEXT, next INTEGER)`;
/** The punches still held for the clock (SQL condition on outbox_events). */
export const HELD = 'clock_synced = 0 AND clock_corrected = 0 AND clock_released = 0';

export const EVENT_COLUMNS = `e.seq, e.id, e.employee_code, e.direction, e.local_time, e.tz_offset, e.in_time, e.in_id, e.shift, e.source, e.score,
  e.terminal_id, e.created_at, e.clock_synced, e.clock_corrected, e.clock_released, e.time_source, e.boot_id, e.monotonic_ms, e.state`;

export interface EventRow {
  seq: number;
  id: string;
  employee_code: string;
  direction: Direction;
  local_time: string;
  tz_offset: number;
  in_time: string | null;
  in_id: string | null;
  shift: string | null;
  source: PunchSource;
  score: number | null;
  terminal_id: string;
  created_at: number;
  clock_synced: number;
  clock_corrected: number;
  clock_released: number;
  time_source: TimeSource;
  boot_id: string;
  monotonic_ms: number;
  state: EventState;
}

export function toEvent(r: EventRow): OutboxEvent {
  return {
    seq: r.seq,
    id: r.id,
    employeeCode: r.employee_code,
    direction: r.direction,
    localTime: r.local_time,
    tzOffset: r.tz_offset,
    inTime: r.in_time,
    inId: r.in_id,
    shift: r.shift,
    source: r.source,
    score: r.score,
    terminalId: r.terminal_id,
    createdAt: r.created_at,
    clockSynced: r.clock_synced === 1,
    clockCorrected: r.clock_corrected === 1,
    clockReleased: r.clock_released === 1,
    timeSource: r.time_source,
    bootId: r.boot_id,
    monotonicMs: r.monotonic_ms,
    state: r.state,
  };
}

/** The seqs of a JSON array parameter, for `seq IN (...)`. */
export const SEQS = 'SELECT value FROM json_each(?)';
/** A delivery's value from the temporary table of outcomes, looked up by its seq. */
export const OUTCOME_VALUE = (column: string) => `(SELECT o.${column} FROM temp.outbox_outcomes o WHERE o.seq = outbox_deliveries.seq)`;

/**
 * Sets the state of these events (`seqsJson`, a JSON array of seqs) from their deliveries: dead
 * when one is dead, pending when one is pending, else delivered (and `done_at` once delivered).
 */
export async function refreshStates(db: SqliteDatabase, seqsJson: string, now: number): Promise<void> {
  await db.run(
    `UPDATE outbox_events SET state = CASE
       WHEN EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.seq = outbox_events.seq AND d.state = 'dead') THEN 'dead'
       WHEN EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.seq = outbox_events.seq AND d.state = 'pending') THEN 'pending'
       ELSE 'delivered' END
     WHERE seq IN (SELECT value FROM json_each(?))`,
    [seqsJson],
  );
  await db.run(
    "UPDATE outbox_events SET done_at = CASE WHEN state = 'delivered' THEN COALESCE(done_at, ?) ELSE NULL END WHERE seq IN (SELECT value FROM json_each(?))",
    [now, seqsJson],
  );
}
