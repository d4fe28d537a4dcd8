/**
 * The service's rows in one SQLite file (WAL, synchronous=FULL). One connection: transactions
 * are `BEGIN IMMEDIATE` and queued (core/sqlite.ts), so a transaction never loses a race and
 * `lockEmployees` has nothing to do. A statement SQLite refuses (a constraint, a trigger) is
 * undone alone, so `attempt` only has to catch it.
 *
 * Tested in test/unit/server/store/store.test.ts (the storage contract on SQLite).
 */
import { isAgentError } from '../../core/errors.js';
import { SqliteDatabase } from '../../core/sqlite.js';
import { SERVER_MIGRATIONS } from './sqlite-schema.js';
import { EVENT_COLUMNS, SqlOps } from './sql-store.js';
import type { Attempt, EventRow, EventUpsert, ServiceStore, StoreOps } from './store.js';

const ON_CONFLICT = `ON CONFLICT (employee_code, in_time) DO UPDATE SET
    out_time = COALESCE(excluded.out_time, server_events.out_time),
    shift = CASE WHEN excluded.shift_given THEN excluded.shift ELSE server_events.shift END,
    shift_given = MAX(server_events.shift_given, excluded.shift_given),
    tz_offset = excluded.tz_offset,
    in_utc = excluded.in_utc,
    updated_at = excluded.updated_at
  RETURNING ${EVENT_COLUMNS}`;
const UPSERT = `INSERT INTO server_events (employee_code, in_time, out_time, in_utc, shift, shift_given, tz_offset, created_at, updated_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
  ${ON_CONFLICT}`;
/** The same upsert for many events at once: ?1 is a JSON array of [code, in, out, inUtc, shift, given, tz]. */
const UPSERT_MANY = `INSERT INTO server_events (employee_code, in_time, out_time, in_utc, shift, shift_given, tz_offset, created_at, updated_at)
  SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
         json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'), ?2, ?2
    FROM json_each(?1) WHERE 1
  ${ON_CONFLICT}`;

export class SqliteStore extends SqlOps implements ServiceStore {
  readonly kind = 'sqlite' as const;
  readonly where: string;
  readonly db: SqliteDatabase;
  /** The portable statements with `$n` turned into SQLite's numbered `?n`. */
  readonly #texts = new Map<string, string>();

  private constructor(db: SqliteDatabase) {
    super();
    this.db = db;
    this.where = db.path;
  }

  /** Opens (creating) the file and applies the `server` migrations. */
  static async open(path: string): Promise<SqliteStore> {
    const db = await SqliteDatabase.open(path);
    try {
      await db.migrate('server', SERVER_MIGRATIONS);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return new SqliteStore(db);
  }

  protected rows<T>(_name: string | null, text: string, values: unknown[] = []): Promise<T[]> {
    let sql = this.#texts.get(text);
    if (sql === undefined) {
      sql = text.replace(/\$(\d+)/g, '?$1');
      this.#texts.set(text, sql);
    }
    return this.db.all<T>(sql, values as never);
  }

  transaction<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T> {
    return this.db.transaction(() => fn(this));
  }

  close(): Promise<void> {
    return this.db.close();
  }

  async lockEmployees(): Promise<void> {
    /* one writer at a time already */
  }

  async attempt<T>(fn: () => Promise<T>): Promise<Attempt<T>> {
    try {
      return { value: await fn() };
    } catch (err) {
      // SQLite undid just that statement; anything else (disk full, corruption) is thrown.
      if (isAgentError(err, 'SQLITE_CONSTRAINT')) return { refused: err };
      throw err;
    }
  }

  async knownUsers(codes: readonly string[]): Promise<Set<string>> {
    // A fixed statement: the codes travel as one JSON parameter.
    const rows = await this.db.all<{ employee_code: string }>(
      'SELECT employee_code FROM server_users WHERE employee_code IN (SELECT value FROM json_each(?))',
      [JSON.stringify(codes)],
    );
    return new Set(rows.map((r) => r.employee_code));
  }

  async upsertEvents(events: readonly EventUpsert[], now: string): Promise<EventRow[]> {
    if (events.length === 0) return [];
    if (events.length === 1) {
      const e = events[0]!;
      const row = await this.db.get<EventRow>(UPSERT, [
        e.employeeCode,
        e.inTime,
        e.outTime,
        e.inUtc,
        e.shift,
        e.shiftGiven ? 1 : 0,
        e.tzMinutes,
        now,
      ]);
      return row ? [row] : [];
    }
    const payload = JSON.stringify(
      events.map((e) => [e.employeeCode, e.inTime, e.outTime, e.inUtc, e.shift, e.shiftGiven ? 1 : 0, e.tzMinutes]),
    );
    return this.db.all<EventRow>(UPSERT_MANY, [payload, now]);
  }
}
