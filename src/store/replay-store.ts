/**
 * What the terminal remembers of the signed ops commands it accepted, across restarts and
 * reboots, in the agent database (component 'ops-replay'):
 * - `ops_accepted`: one row per command accepted whose time is still inside the signature window
 *   (key id, transaction id, the signature's time);
 * - `ops_floors`: per key id, the newest signature time of a command forgotten (a row leaves
 *   `ops_accepted` once its time left the window). The ops layer refuses anything signed at or
 *   before it, so a command forgotten stays refused even when the clock steps back.
 *
 * The rule is the ops layer's (src/ops/ops-auth.ts, `ReplayLedger`); the store only keeps it and
 * imports nothing of ops. `record` resolves once the row is in the file (synchronous=FULL): the
 * command runs after that, so a `restart` it causes starts with the command remembered.
 */
import type { Migration, SqliteDatabase } from '../core/sqlite.js';

export interface AcceptedCommandRow {
  kid: string;
  transaction: string;
  /** The signature's time (ms since the epoch). */
  ts: number;
}

export const REPLAY_MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'signed ops commands accepted, and per key the newest forgotten',
    up: `
      CREATE TABLE ops_accepted (
        kid TEXT NOT NULL,
        tx TEXT NOT NULL,
        ts INTEGER NOT NULL,
        PRIMARY KEY (kid, tx)
      ) WITHOUT ROWID;
      CREATE INDEX ops_accepted_ts ON ops_accepted (ts);
      CREATE TABLE ops_floors (
        kid TEXT PRIMARY KEY,
        ts INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
];

export class ReplayStore {
  readonly #db: SqliteDatabase;

  private constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  static async open(db: SqliteDatabase): Promise<ReplayStore> {
    await db.migrate('ops-replay', REPLAY_MIGRATIONS);
    return new ReplayStore(db);
  }

  /** Every command remembered, and the floors by key id. */
  async load(): Promise<{ accepted: AcceptedCommandRow[]; floors: Record<string, number> }> {
    const rows = await this.#db.all<{ kid: string; tx: string; ts: number }>('SELECT kid, tx, ts FROM ops_accepted ORDER BY ts');
    const floors = await this.#db.all<{ kid: string; ts: number }>('SELECT kid, ts FROM ops_floors');
    return {
      accepted: rows.map((r) => ({ kid: r.kid, transaction: r.tx, ts: r.ts })),
      floors: Object.fromEntries(floors.map((f) => [f.kid, f.ts])),
    };
  }

  /**
   * In one transaction: forgets every command signed before `forgetBefore` (raising its key's
   * floor to the newest of them), then records `accepted`.
   */
  async record(accepted: AcceptedCommandRow, forgetBefore: number): Promise<void> {
    await this.#db.transaction(async (db) => {
      await db.run(
        `INSERT INTO ops_floors (kid, ts) SELECT kid, MAX(ts) FROM ops_accepted WHERE ts < ? GROUP BY kid
         ON CONFLICT (kid) DO UPDATE SET ts = MAX(ts, excluded.ts)`,
        [forgetBefore],
      );
      await db.run('DELETE FROM ops_accepted WHERE ts < ?', [forgetBefore]);
      await db.run('INSERT INTO ops_accepted (kid, tx, ts) VALUES (?, ?, ?) ON CONFLICT (kid, tx) DO NOTHING', [
        accepted.kid,
        accepted.transaction,
        accepted.ts,
      ]);
    });
  }
}
