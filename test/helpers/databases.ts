/**
 * The databases the attendance service runs on, for suites written once and run against each:
 *
 *   for (const database of SERVICE_DATABASES) {
 *     describe.skipIf(!database.available)(`... on ${database.label}`, () => {
 *       beforeAll(() => database.start());
 *       afterAll(() => database.stop());
 *       ... startService({ ...(await database.serviceOptions()) }) ...
 *     });
 *   }
 *
 * SQLite: a temporary file per service. PostgreSQL: one server per test file
 * (test/helpers/postgres.ts), a new database per service, a fixed biometric key. `query`,
 * `refuse` and `renameTables` reach into a service's database the way each engine needs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { hasPostgres, POSTGRES_PROGRAMS, startPostgres, type TestPostgres } from './postgres.js';
import { needs } from './system.js';

export interface ServiceDatabaseOptions {
  /** The SQLite file or the PostgreSQL URL. */
  dbPath: string;
  biometricKey?: Buffer;
}

export interface ServiceDatabase {
  kind: 'sqlite' | 'postgres';
  /** For suite names: `SQLite`, or `PostgreSQL` (with what is missing when it is skipped). */
  label: string;
  available: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A new, empty database: an SQLite file path or a PostgreSQL URL (removed by `stop`). */
  fresh(): Promise<string>;
  /** Where a new service keeps its data (a fresh database) and, on PostgreSQL, its biometric key. */
  serviceOptions(): Promise<ServiceDatabaseOptions>;
  /** One statement on a service's database, `$1` placeholders on both. */
  query<T = Record<string, unknown>>(dbPath: string, sql: string, params?: unknown[]): Promise<T[]>;
  /** Makes the database refuse `op` on `table` for rows of employee `code` (a trigger). */
  refuse(dbPath: string, table: string, op: 'INSERT' | 'UPDATE', code: string): Promise<void>;
  /** Renames tables (to make every statement fail), and back with `back`. */
  renameTables(dbPath: string, tables: string[], back?: boolean): Promise<void>;
}

const rename = (tables: string[], back: boolean) =>
  tables.map((t) => (back ? `ALTER TABLE ${t}_away RENAME TO ${t}` : `ALTER TABLE ${t} RENAME TO ${t}_away`));

function sqlite(): ServiceDatabase {
  const withDb = async <T>(path: string, fn: (db: SqliteDatabase) => Promise<T>): Promise<T> => {
    const db = await SqliteDatabase.open(path);
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  let triggers = 0;
  let dir: string | undefined;
  let files = 0;
  const fresh = async () => {
    dir ??= mkdtempSync(join(tmpdir(), 'edge-agent-sqlite-'));
    return join(dir, `service-${++files}.db`);
  };
  return {
    kind: 'sqlite',
    label: 'SQLite',
    available: true,
    async start() {},
    async stop() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
    fresh,
    async serviceOptions() {
      return { dbPath: await fresh() };
    },
    query: <T>(path: string, sql: string, params: unknown[] = []) =>
      withDb(path, (db) => db.all<T>(sql.replace(/\$(\d+)/g, '?$1'), params as never)),
    refuse: (path, table, op, code) =>
      withDb(path, (db) =>
        db.exec(
          `CREATE TRIGGER refuse_${++triggers} BEFORE ${op} ON ${table} WHEN NEW.employee_code = '${code}' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`,
        ),
      ),
    renameTables: (path, tables, back = false) =>
      withDb(path, async (db) => {
        for (const s of rename(tables, back)) await db.exec(s);
      }),
  };
}

function postgres(): ServiceDatabase {
  let server: TestPostgres | undefined;
  const available = hasPostgres();
  const key = randomBytes(32);
  const dbName = (url: string) => new URL(url).pathname.slice(1);
  const running = () => {
    if (!server) throw new Error('PostgreSQL is not started: call start() in beforeAll');
    return server;
  };
  let triggers = 0;
  return {
    kind: 'postgres',
    label: available ? 'PostgreSQL' : `PostgreSQL (${needs(...POSTGRES_PROGRAMS)})`,
    available,
    async start() {
      server ??= await startPostgres();
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
    fresh: () => running().createDatabase(),
    async serviceOptions() {
      return { dbPath: await running().createDatabase(), biometricKey: key };
    },
    query: <T>(url: string, sql: string, params: unknown[] = []) => running().query(dbName(url), sql, params) as Promise<T[]>,
    async refuse(url, table, op, code) {
      const fn = `refuse_${++triggers}`;
      await running().query(
        dbName(url),
        `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by test trigger'; END $$`,
      );
      await running().query(
        dbName(url),
        `CREATE TRIGGER ${fn} BEFORE ${op} ON ${table} FOR EACH ROW WHEN (NEW.employee_code = '${code}') EXECUTE FUNCTION ${fn}()`,
      );
    },
    async renameTables(url, tables, back = false) {
      for (const s of rename(tables, back)) await running().query(dbName(url), s);
    },
  };
}

/** SQLite, and PostgreSQL where its programs are installed. */
export const SERVICE_DATABASES: ServiceDatabase[] = [sqlite(), postgres()];
