/**
 * The service's rows in PostgreSQL through a `pg` pool, for one or many `serve` replicas on the
 * same database. Nothing here relies on being the only process:
 *
 * - An event's identity (employee_code, in_time) is a unique key; check-ins are written with
 *   `INSERT … ON CONFLICT DO UPDATE`, so two replicas storing the same event leave one row.
 * - `lockEmployees` takes transaction-scoped advisory locks (in one order, so two batches do not
 *   deadlock on them): an employee's check-outs and enrolments are decided one transaction at a
 *   time across replicas.
 * - Transactions run at READ COMMITTED. One that loses a race (serialization failure, deadlock,
 *   a unique key another replica just took) is rolled back and run again, up to 8 times.
 * - PostgreSQL aborts a whole transaction on a failed statement. The fast path takes no
 *   savepoints; when the database refuses something inside `attempt`, the transaction is run
 *   again in "careful" mode, where each `attempt` is a savepoint and only its work is undone.
 *
 * Errors become AgentErrors: `SERVER_DB_UNAVAILABLE` (retryable: connection refused or lost,
 * server shutting down, too many connections, login refused: the HTTP layer answers 503),
 * `SERVER_DB_REFUSED` (a constraint or trigger), `SERVER_DB_ERROR` (anything else). The URL's
 * password never reaches a log or an error.
 *
 * The URL may carry `pool_max=N` (connections per replica, default 10); other parameters are
 * libpq's (sslmode, application_name, ...), and PGPASSWORD or ~/.pgpass keep the password out of it.
 *
 * Tested in test/unit/server/store/store.test.ts (the storage contract on PostgreSQL, where initdb
 * and pg_ctl are installed; two pools as two replicas) and test/integration/api-replicas.test.ts.
 */
import pg from 'pg';
import { AgentError } from '../../core/errors.js';
import { logger } from '../../core/logger.js';
import { PG_SERVER_MIGRATIONS, type PgMigration } from './pg-schema.js';
import { EVENT_COLUMNS, SqlOps } from './sql-store.js';
import type { Attempt, EventRow, EventUpsert, ServiceStore, StoreOps } from './store.js';

const log = logger('server:pg');
/** Namespace of the service's advisory locks (`pg_advisory_xact_lock(namespace, hashtext(code))`). */
const LOCK_NAMESPACE = 0x4541; // "EA"
const MIGRATION_LOCK = 0x45414d; // "EAM"
const MAX_TRIES = 8;
const DEFAULT_POOL_MAX = 10;

const UPSERT_EVENTS = `INSERT INTO server_events AS e (employee_code, in_time, out_time, in_utc, shift, shift_given, tz_offset, created_at, updated_at)
  SELECT c, i, o, u, s, g, z, $8, $8
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::boolean[], $7::integer[]) AS t(c, i, o, u, s, g, z)
  ON CONFLICT (employee_code, in_time) DO UPDATE SET
    out_time = COALESCE(EXCLUDED.out_time, e.out_time),
    shift = CASE WHEN EXCLUDED.shift_given THEN EXCLUDED.shift ELSE e.shift END,
    shift_given = e.shift_given OR EXCLUDED.shift_given,
    tz_offset = EXCLUDED.tz_offset,
    in_utc = EXCLUDED.in_utc,
    updated_at = EXCLUDED.updated_at
  RETURNING ${EVENT_COLUMNS}`;

/** BIGINT (ids, counts, epoch milliseconds) as a JS number: every value here is below 2^53. */
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The URL without its password, for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53100', '53200', '28P01', '28000', '3D000', '55000']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** A race another transaction won: run the transaction again. */
const RACE_SQLSTATES = new Set(['40001', '40P01', '23505']);

function sqlstate(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function isRefusal(err: unknown): boolean {
  const s = sqlstate(err);
  return s !== undefined && (s.startsWith('23') || s.startsWith('22') || s === 'P0001');
}

function isUnavailable(err: unknown): boolean {
  const s = sqlstate(err);
  if (s) return s.startsWith('08') || UNAVAILABLE_SQLSTATES.has(s);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed/i.test(
    (err as Error).message ?? '',
  );
}

/** A `pg` error as an AgentError a caller can act on (never with the URL's password). */
export function pgError(err: unknown, where: string, context: Record<string, unknown> = {}): AgentError {
  if (err instanceof AgentError) return err;
  const e = err as { message?: string; code?: string; detail?: string; table?: string; constraint?: string };
  const ctx = {
    ...context,
    db: where,
    ...(sqlstate(err) ? { sqlstate: e.code } : {}),
    ...(e.table ? { table: e.table } : {}),
    ...(e.constraint ? { constraint: e.constraint } : {}),
  };
  const message = `${where}: ${e.message ?? String(err)}`;
  if (isUnavailable(err)) {
    const s = sqlstate(err);
    const hint =
      s === '28P01' || s === '28000'
        ? 'PostgreSQL refused the login: check the user in the URL and the password (PGPASSWORD or ~/.pgpass)'
        : s === '3D000'
          ? 'the database does not exist: create it (createdb NAME) or fix the URL'
          : s === '53300'
            ? 'PostgreSQL has no free connection: lower pool_max per replica or raise max_connections'
            : undefined;
    return new AgentError('SERVER_DB_UNAVAILABLE', message, ctx, { retryable: true, cause: err, ...(hint ? { hint } : {}) });
  }
  if (isRefusal(err)) return new AgentError('SERVER_DB_REFUSED', message, ctx, { cause: err });
  return new AgentError('SERVER_DB_ERROR', message, ctx, { cause: err });
}

/** Thrown inside an optimistic transaction when `attempt` met a refusal: run it again carefully. */
class NeedCareful extends Error {}

/**
 * How `attempt` works: on the pool each statement is its own transaction (nothing to undo); in
 * an optimistic transaction a refusal restarts the transaction carefully; in a careful one each
 * attempt is a savepoint.
 */
type Mode = 'pool' | 'optimistic' | 'careful';

/** The operations, on the pool or on one transaction's client. */
class PgOps extends SqlOps {
  protected readonly q: Queryable;
  protected readonly whereText: string;
  readonly #mode: Mode;
  #savepoints = 0;

  constructor(q: Queryable, where: string, mode: Mode) {
    super();
    this.q = q;
    this.whereText = where;
    this.#mode = mode;
  }

  protected async rows<T>(name: string | null, text: string, values: unknown[] = []): Promise<T[]> {
    try {
      const r = await this.q.query<T & pg.QueryResultRow>(name ? { name, text, values } : { text, values });
      return r.rows;
    } catch (err) {
      throw pgError(err, this.whereText);
    }
  }

  async lockEmployees(codes: readonly string[]): Promise<void> {
    if (codes.length === 0) return;
    // Volatile functions in the select list run after the sort: the locks are taken in key order.
    await this.rows(
      'ea_lock',
      `SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, k) FROM (SELECT DISTINCT hashtext(c) AS k FROM unnest($1::text[]) AS c) s ORDER BY k`,
      [[...codes]],
    );
  }

  async attempt<T>(fn: () => Promise<T>): Promise<Attempt<T>> {
    if (this.#mode !== 'careful') {
      try {
        return { value: await fn() };
      } catch (err) {
        if (!isRefusal((err as { cause?: unknown }).cause ?? err)) throw err;
        if (this.#mode === 'optimistic') throw new NeedCareful();
        return { refused: err as Error };
      }
    }
    const sp = `ea_attempt_${++this.#savepoints}`;
    await this.rows(null, `SAVEPOINT ${sp}`);
    try {
      const value = await fn();
      await this.rows(null, `RELEASE SAVEPOINT ${sp}`);
      return { value };
    } catch (err) {
      if (!isRefusal((err as { cause?: unknown }).cause ?? err)) throw err;
      await this.rows(null, `ROLLBACK TO SAVEPOINT ${sp}`);
      return { refused: err as Error };
    }
  }

  async knownUsers(codes: readonly string[]): Promise<Set<string>> {
    const rows = await this.rows<{ employee_code: string }>(
      'ea_known_users',
      'SELECT employee_code FROM server_users WHERE employee_code = ANY($1::text[])',
      [[...codes]],
    );
    return new Set(rows.map((r) => r.employee_code));
  }

  async upsertEvents(events: readonly EventUpsert[], now: string): Promise<EventRow[]> {
    if (events.length === 0) return [];
    // In key order, so that two batches over the same rows lock them in the same order.
    const sorted = [...events].sort((a, b) =>
      a.employeeCode < b.employeeCode ? -1 : a.employeeCode > b.employeeCode ? 1 : a.inTime < b.inTime ? -1 : a.inTime > b.inTime ? 1 : 0,
    );
    const col = <K extends keyof EventUpsert>(k: K) => sorted.map((e) => e[k]);
    return this.rows<EventRow>('ea_upsert_events', UPSERT_EVENTS, [
      col('employeeCode'),
      col('inTime'),
      col('outTime'),
      col('inUtc'),
      col('shift'),
      col('shiftGiven'),
      col('tzMinutes'),
      now,
    ]);
  }
}

export class PgStore extends PgOps implements ServiceStore {
  readonly kind = 'postgres' as const;
  readonly where: string;
  readonly #pool: pg.Pool;
  #closed = false;

  private constructor(pool: pg.Pool, where: string) {
    super(pool, where, 'pool');
    this.#pool = pool;
    this.where = where;
  }

  /** Connects, and applies the migrations (one replica at a time: the others wait on a lock). */
  static async open(url: string, options: { migrations?: PgMigration[] } = {}): Promise<PgStore> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (err) {
      throw new AgentError('SERVER_DB_URL', `the database URL is not a URL: ${redactUrl(url)}`, { db: redactUrl(url) }, { cause: err });
    }
    let poolMax = DEFAULT_POOL_MAX;
    const given = parsed.searchParams.get('pool_max');
    if (given !== null) {
      poolMax = Number(given);
      if (!Number.isInteger(poolMax) || poolMax < 1 || poolMax > 1000) {
        throw new AgentError('SERVER_DB_URL', `pool_max in the database URL must be a whole number from 1 to 1000, got "${given}"`, {
          pool_max: given,
        });
      }
      parsed.searchParams.delete('pool_max');
    }
    const where = redactUrl(url);
    const pool = new pg.Pool({
      connectionString: parsed.toString(),
      max: poolMax,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 10_000,
      application_name: 'edge-agent serve',
      types: TYPES,
    });
    // An idle connection that breaks (a server restart) must not end the process.
    pool.on('error', (err) =>
      log.warn({ err: { message: err.message, code: (err as { code?: string }).code }, db: where }, 'idle PostgreSQL connection lost'),
    );
    const store = new PgStore(pool, where);
    try {
      await store.#migrate(options.migrations ?? PG_SERVER_MIGRATIONS);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw pgError(err, where);
    }
    return store;
  }

  async #migrate(migrations: PgMigration[]): Promise<void> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await client.query(
          'CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL, description TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (component, version))',
        );
        const current =
          (await client.query<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations WHERE component = 'server'")).rows[0]
            ?.v ?? 0;
        const sorted = [...migrations].sort((a, b) => a.version - b.version);
        const known = sorted.at(-1)?.version ?? 0;
        // Migrations only go forward (as on SQLite, core/sqlite.ts): a replica of an older release
        // would misread tables a newer one changed, so it refuses before reading or writing.
        if (current > known) {
          throw new AgentError(
            'STORE_SCHEMA_TOO_NEW',
            `${this.where}: the server schema is at version ${current}, newer than the ${known} this edge-agent knows`,
            { db: this.where, version: current, known },
            {
              hint: 'a newer edge-agent serve (or keys) migrated this database: run every replica on that release (in a rolling upgrade, start the new replicas and stop the old ones); migrations only go forward',
            },
          );
        }
        for (const m of sorted) {
          if (m.version <= current) continue;
          await client.query('BEGIN');
          try {
            await client.query(m.up);
            await client.query(
              "INSERT INTO schema_migrations (component, version, description, applied_at) VALUES ('server', $1, $2, $3)",
              [m.version, m.description, new Date().toISOString()],
            );
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw err;
          }
          log.info({ version: m.version, description: m.description, db: this.where }, 'applied a migration');
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async transaction<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T> {
    let careful = false;
    for (let tryNo = 1; ; tryNo++) {
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (err) {
        throw pgError(err, this.where);
      }
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(new PgOps(client, this.where, careful ? 'careful' : 'optimistic'));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        if (err instanceof NeedCareful) {
          careful = true;
          continue;
        }
        const state = sqlstate((err as { cause?: unknown }).cause ?? err);
        if (state && RACE_SQLSTATES.has(state) && tryNo < MAX_TRIES) {
          log.debug({ sqlstate: state, try: tryNo }, 'transaction lost a race with another one; running it again');
          await new Promise((r) => setTimeout(r, Math.random() * 5 * 2 ** tryNo));
          continue;
        }
        throw pgError(err, this.where);
      } finally {
        client.release(broken);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}
