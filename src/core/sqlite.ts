/**
 * A small promise wrapper over the `sqlite3` package, shared by the agent's store and the
 * attendance service. It owns the pragmas every database here wants (WAL, synchronous=FULL,
 * busy timeout, foreign keys), serializes transactions so that statements of other callers never
 * land inside one, caches prepared statements, and runs versioned migrations per component.
 *
 * Every database file is private: the folder is created 0700, the database, WAL and shared-memory
 * files are 0600 whatever the umask, and looser ones are tightened on open (private-files.ts).
 *
 * A full disk, a locked or corrupt file become AgentErrors with codes a caller can act on:
 * `SQLITE_DISK_FULL`, `SQLITE_BUSY`, `SQLITE_CORRUPT`, `SQLITE_READONLY`, `SQLITE_CANTOPEN`,
 * `SQLITE_CONSTRAINT`, otherwise `SQLITE_ERROR`.
 */
import sqlite3 from 'sqlite3';
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { AgentError } from './errors.js';
import { createPrivateFile, makePrivateDir, tightenDatabaseFiles } from './private-files.js';

export type Param = string | number | bigint | Buffer | Uint8Array | null | boolean;
export type Params = Param[] | Record<string, Param>;

export interface RunResult {
  changes: number;
  lastID: number;
}

export interface OpenOptions {
  busyTimeoutMs?: number;
  /** `FULL` (default) fsyncs the WAL on every commit: a committed row survives power loss. */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
  readonly?: boolean;
}

export interface Migration {
  version: number;
  description: string;
  up: string | ((db: SqliteDatabase) => Promise<void>);
}

const HINTS: Record<string, string> = {
  SQLITE_DISK_FULL: 'the disk is full: free space on the data partition (old logs, images); nothing recorded so far is lost',
  SQLITE_FULL: 'the disk is full: free space on the data partition (old logs, images); nothing recorded so far is lost',
  SQLITE_BUSY:
    'another process was writing to the database longer than the wait allows (an import or another edge-agent command on this data folder): it is retried; if it keeps happening with nothing else running, check with "edge-agent doctor" that no second agent runs on this data folder',
  SQLITE_LOCKED:
    'another process was writing to the database longer than the wait allows (an import or another edge-agent command on this data folder): it is retried; if it keeps happening with nothing else running, check with "edge-agent doctor" that no second agent runs on this data folder',
  SQLITE_CORRUPT: 'the database file is damaged: run "edge-agent doctor" and restore it from backup',
  SQLITE_NOTADB: 'the file is not an SQLite database: check the data folder path',
  SQLITE_READONLY: 'the database is read-only: check the permissions of the data folder',
  SQLITE_CANTOPEN: 'the database cannot be opened: check that the data folder exists and is writable',
};

export function sqliteError(err: unknown, context: Record<string, unknown> = {}): AgentError {
  if (err instanceof AgentError) return err;
  const e = err as { code?: string; message?: string };
  let code: `SQLITE_${string}` = e.code?.startsWith('SQLITE_') ? (e.code as `SQLITE_${string}`) : 'SQLITE_ERROR';
  if (code === 'SQLITE_FULL') code = 'SQLITE_DISK_FULL';
  if (code === 'SQLITE_LOCKED') code = 'SQLITE_BUSY';
  if (code === 'SQLITE_NOTADB') code = 'SQLITE_CORRUPT';
  const retryable = code === 'SQLITE_BUSY' || code === 'SQLITE_DISK_FULL';
  return new AgentError(code, e.message ?? String(err), context, { hint: HINTS[code] ?? HINTS[e.code ?? ''], retryable, cause: err });
}

/**
 * What the first 100 bytes and the size of a database file say is wrong with it, without SQLite:
 * not an SQLite file, an impossible page size, a size that is not whole pages, or fewer pages
 * than the header counts (a truncated file; judged only with no WAL to replay). Null when sound,
 * absent or empty (a new database).
 */
export function headerProblem(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    const head = Buffer.alloc(100);
    const got = readSync(fd, head, 0, 100, 0);
    if (got < 100 || head.toString('latin1', 0, 16) !== 'SQLite format 3\0')
      return 'not an SQLite database (its first bytes are not "SQLite format 3")';
    const raw = head.readUInt16BE(16);
    const pageSize = raw === 1 ? 65_536 : raw;
    if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return `impossible page size ${raw} in the header`;
    if (size % pageSize !== 0) return `the file is ${size} bytes, not a whole number of ${pageSize}-byte pages (cut short?)`;
    const counted = head.readUInt32BE(28);
    const valid = head.readUInt32BE(92) === head.readUInt32BE(24);
    let wal = 0;
    try {
      wal = statSync(`${path}-wal`).size;
    } catch {
      // no WAL
    }
    if (valid && wal === 0 && counted > size / pageSize)
      return `the header counts ${counted} pages, the file holds ${size / pageSize} (cut short)`;
    return null;
  } finally {
    closeSync(fd);
  }
}

export class SqliteDatabase {
  readonly path: string;
  readonly #db: sqlite3.Database;
  /** The `synchronous` level the database was opened with (restored after a non-durable transaction). */
  #synchronous: NonNullable<OpenOptions['synchronous']> = 'FULL';
  /** Prepared statements by SQL text; a statement that fails to prepare is not kept. */
  readonly #statements = new Map<string, Promise<sqlite3.Statement>>();
  /** Tail of the transaction queue: each transaction starts after the previous one settled. */
  #queue: Promise<unknown> = Promise.resolve();
  #inTransaction = false;
  #closed = false;

  private constructor(path: string, db: sqlite3.Database) {
    this.path = path;
    this.#db = db;
  }

  static async open(path: string, options: OpenOptions = {}): Promise<SqliteDatabase> {
    if (path !== ':memory:' && !options.readonly) {
      // The folder is made 0700 and the file 0600 before SQLite creates it (its WAL and shared
      // memory files take the database's mode); files found looser are tightened and logged.
      makePrivateDir(dirname(path));
      if (!createPrivateFile(path)) tightenDatabaseFiles(path);
    }
    const mode = options.readonly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    const raw = await new Promise<sqlite3.Database>((resolve, reject) => {
      const db = new sqlite3.Database(path, mode, (err) => (err ? reject(sqliteError(err, { path })) : resolve(db)));
    });
    const db = new SqliteDatabase(path, raw);
    raw.configure('busyTimeout', options.busyTimeoutMs ?? 5000);
    try {
      if (!options.readonly) await db.exec('PRAGMA journal_mode=WAL');
      db.#synchronous = options.synchronous ?? 'FULL';
      await db.exec(`PRAGMA synchronous=${db.#synchronous}`);
      await db.exec('PRAGMA foreign_keys=ON');
    } catch (err) {
      await db.close().catch(() => undefined);
      throw sqliteError(err, { path });
    }
    return db;
  }

  /**
   * The cached statement for `sql`. Prepared with a callback: a statement that cannot be prepared
   * (no such table, corrupt file) rejects with an AgentError instead of emitting an unhandled
   * 'error' event (which would end the process) and leaving its callers waiting forever.
   */
  #statement(sql: string): Promise<sqlite3.Statement> {
    let p = this.#statements.get(sql);
    if (!p) {
      const prepared = new Promise<sqlite3.Statement>((resolve, reject) => {
        const st = this.#db.prepare(sql, (err: Error | null) => (err ? reject(sqliteError(err, { sql })) : resolve(st)));
      });
      prepared.catch(() => {
        if (this.#statements.get(sql) === prepared) this.#statements.delete(sql);
      });
      this.#statements.set(sql, prepared);
      p = prepared;
    }
    return p;
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.#db.exec(sql, (err) => (err ? reject(sqliteError(err, { sql })) : resolve())));
  }

  async run(sql: string, params: Params = []): Promise<RunResult> {
    const st = await this.#statement(sql);
    return new Promise((resolve, reject) => {
      st.run(params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(sqliteError(err, { sql }));
        else resolve({ changes: this.changes, lastID: this.lastID });
      });
    });
  }

  async get<T = Record<string, unknown>>(sql: string, params: Params = []): Promise<T | undefined> {
    const st = await this.#statement(sql);
    return new Promise((resolve, reject) => {
      st.get(params, (err: Error | null, row: T) => (err ? reject(sqliteError(err, { sql })) : resolve(row)));
      // A cached statement keeps its cursor after get(); reset it so the next get() starts over.
      st.reset();
    });
  }

  async all<T = Record<string, unknown>>(sql: string, params: Params = []): Promise<T[]> {
    const st = await this.#statement(sql);
    return new Promise((resolve, reject) => {
      st.all(params, (err: Error | null, rows: T[]) => (err ? reject(sqliteError(err, { sql })) : resolve(rows)));
    });
  }

  /**
   * Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`; rolls back if it throws. Transactions are queued,
   * so two callers never interleave; resolves only after the commit is durable (with
   * synchronous=FULL). There is one connection: a statement issued outside `transaction()` while
   * one runs executes inside it, so every write goes through `transaction()`; plain reads may not.
   *
   * `durable: false` commits without waiting for the disk (`synchronous=NORMAL` for this one
   * transaction): for writes whose loss on a power cut only means doing them again (an upstream's
   * outcomes: the batch is sent again and the upstream deduplicates). It stays atomic and never
   * corrupts the file, and the next durable commit makes it durable too (the WAL is written in
   * order).
   */
  transaction<T>(fn: (db: SqliteDatabase) => Promise<T>, options: { durable?: boolean } = {}): Promise<T> {
    const relaxed = options.durable === false && this.#synchronous === 'FULL';
    const restore = `PRAGMA synchronous=${this.#synchronous}`;
    const next = this.#queue.then(async () => {
      // The level change rides in the same exec as BEGIN and COMMIT: no extra round trip.
      try {
        await this.exec(relaxed ? 'PRAGMA synchronous=NORMAL; BEGIN IMMEDIATE' : 'BEGIN IMMEDIATE');
      } catch (err) {
        if (relaxed) await this.exec(restore).catch(() => undefined);
        throw err;
      }
      this.#inTransaction = true;
      try {
        const result = await fn(this);
        await this.exec(relaxed ? `COMMIT; ${restore}` : 'COMMIT');
        return result;
      } catch (err) {
        await this.exec('ROLLBACK').catch(() => undefined);
        if (relaxed) await this.exec(restore).catch(() => undefined);
        throw err;
      } finally {
        this.#inTransaction = false;
      }
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  get inTransaction(): boolean {
    return this.#inTransaction;
  }

  /**
   * Applies the migrations of one component (`outbox`, `templates`, `server`) whose version is
   * above the recorded one, each in its own transaction. Components version independently.
   *
   * Migrations only go forward. A database that a newer agent migrated past the last version
   * this one knows is refused (`STORE_SCHEMA_TOO_NEW`) before anything is read or written: an
   * older release after a rollback would otherwise misread tables whose meaning changed.
   */
  async migrate(component: string, migrations: Migration[]): Promise<number> {
    await this.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL, description TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (component, version))',
    );
    const row = await this.get<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations WHERE component = ?', [component]);
    const current = row?.v ?? 0;
    const sorted = [...migrations].sort((a, b) => a.version - b.version);
    const known = sorted.length ? sorted[sorted.length - 1]!.version : 0;
    if (current > known) {
      throw new AgentError(
        'STORE_SCHEMA_TOO_NEW',
        `${this.path}: the ${component} schema is at version ${current}, newer than the ${known} this edge-agent knows`,
        { path: this.path, component, version: current, known },
      );
    }
    let applied = current;
    for (const m of sorted) {
      if (m.version <= current) continue;
      await this.transaction(async (db) => {
        if (typeof m.up === 'string') await db.exec(m.up);
        else await m.up(db);
        await db.run('INSERT INTO schema_migrations (component, version, description, applied_at) VALUES (?, ?, ?, ?)', [
          component,
          m.version,
          m.description,
          new Date().toISOString(),
        ]);
      });
      applied = m.version;
    }
    return applied;
  }

  /**
   * A bounded look for damage, cheap enough for every open: `PRAGMA quick_check(1)` (every page
   * of every b-tree, not the index contents) interrupted after `timeMs`, so a big database costs
   * at most that. `complete` says whether it read the whole file; `problem` is SQLite's first
   * finding (or the corruption error it met), null when none.
   */
  async quickCheck(timeMs: number): Promise<{ problem: string | null; complete: boolean }> {
    const timer = setTimeout(() => this.#db.interrupt(), timeMs);
    try {
      const rows = await this.all<{ quick_check: string }>('PRAGMA quick_check(1)');
      const first = rows[0]?.quick_check ?? 'ok';
      return { problem: first === 'ok' ? null : rows.map((r) => r.quick_check).join('; '), complete: true };
    } catch (err) {
      const e = sqliteError(err);
      if (e.code === 'SQLITE_INTERRUPT') return { problem: null, complete: false };
      if (e.code === 'SQLITE_CORRUPT') return { problem: e.message, complete: false };
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** `PRAGMA integrity_check`: 'ok' or the problems SQLite found. */
  async integrityCheck(): Promise<string[]> {
    const rows = await this.all<{ integrity_check: string }>('PRAGMA integrity_check');
    return rows.map((r) => r.integrity_check);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    for (const p of this.#statements.values()) {
      const st = await p.catch(() => undefined);
      if (st) await new Promise<void>((r) => st.finalize(() => r()));
    }
    this.#statements.clear();
    await new Promise<void>((resolve, reject) => this.#db.close((err) => (err ? reject(sqliteError(err)) : resolve())));
  }
}
