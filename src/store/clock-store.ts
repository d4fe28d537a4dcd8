/**
 * What the time authority (src/terminal/time-authority.ts) remembers across restarts and
 * reboots, in the agent database (component 'clock'):
 * - `clock_state`, one row: the last judgement (trusted or not, which source, why), the latest
 *   trusted wall-clock time ever seen (a clock earlier than it is never trusted), and the steps
 *   seen (how many, the last one's size and when).
 * - `clock_anchors`, one row per boot: the latest (wall, monotonic) pair read while the clock was
 *   trusted on that boot. A punch taken on that boot with an untrusted clock is corrected from it
 *   (`wall + (monoAtPunch − mono)`), even after a reboot; a boot without an anchor gives its
 *   untrusted punches no monotonic link, and they wait for an explicit decision.
 *
 * Writes take the transaction's handle (`db`), so the authority changes its state and corrects
 * punches in one transaction.
 *
 * Tested in test/unit/terminal/time-authority.test.ts (what the authority remembers across a
 * restart and a reboot) and test/unit/setup/clock-report.test.ts.
 */
import type { Migration, SqliteDatabase } from '../core/sqlite.js';

export interface ClockAnchor {
  bootId: string;
  wallMs: number;
  monoMs: number;
}

export interface ClockStep {
  /** Signed: how far the wall clock moved against the monotonic clock (+ forward, − back). */
  sizeMs: number;
  /** The wall clock just after the step (ms). */
  at: number;
  bootId: string;
}

export interface ClockRecord {
  /** The authority's last judgement; null before the first one. */
  trusted: boolean | null;
  source: string | null;
  detail: string | null;
  /** Boot and monotonic reading of that judgement (its age without trusting the wall clock). */
  bootId: string | null;
  judgedMonoMs: number | null;
  /** The latest wall-clock time read while the clock was trusted, on any boot. */
  lastTrustedMs: number | null;
  steps: number;
  lastStep: ClockStep | null;
  /** Punches corrected from the monotonic clock, ever. */
  corrected: number;
}

export const CLOCK_MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'time authority state and per-boot anchors',
    up: `
      CREATE TABLE clock_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        trusted INTEGER,
        source TEXT,
        detail TEXT,
        boot_id TEXT,
        judged_mono_ms INTEGER,
        last_trusted_ms INTEGER,
        steps INTEGER NOT NULL DEFAULT 0,
        last_step_ms INTEGER,
        last_step_at INTEGER,
        last_step_boot TEXT,
        corrected INTEGER NOT NULL DEFAULT 0
      );
      INSERT INTO clock_state (id) VALUES (1);
      CREATE TABLE clock_anchors (
        boot_id TEXT PRIMARY KEY,
        wall_ms INTEGER NOT NULL,
        mono_ms INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
];

interface StateRow {
  trusted: number | null;
  source: string | null;
  detail: string | null;
  boot_id: string | null;
  judged_mono_ms: number | null;
  last_trusted_ms: number | null;
  steps: number;
  last_step_ms: number | null;
  last_step_at: number | null;
  last_step_boot: string | null;
  corrected: number;
}

export class ClockStore {
  readonly db: SqliteDatabase;

  private constructor(db: SqliteDatabase) {
    this.db = db;
  }

  static async open(db: SqliteDatabase): Promise<ClockStore> {
    await db.migrate('clock', CLOCK_MIGRATIONS);
    return new ClockStore(db);
  }

  async read(db: SqliteDatabase = this.db): Promise<ClockRecord> {
    const r = await db.get<StateRow>('SELECT * FROM clock_state WHERE id = 1');
    return {
      trusted: r?.trusted == null ? null : r.trusted === 1,
      source: r?.source ?? null,
      detail: r?.detail ?? null,
      bootId: r?.boot_id ?? null,
      judgedMonoMs: r?.judged_mono_ms ?? null,
      lastTrustedMs: r?.last_trusted_ms ?? null,
      steps: r?.steps ?? 0,
      lastStep:
        r?.last_step_ms != null && r.last_step_at != null
          ? { sizeMs: r.last_step_ms, at: r.last_step_at, bootId: r.last_step_boot ?? '' }
          : null,
      corrected: r?.corrected ?? 0,
    };
  }

  async anchors(db: SqliteDatabase = this.db): Promise<Map<string, ClockAnchor>> {
    const rows = await db.all<{ boot_id: string; wall_ms: number; mono_ms: number }>('SELECT boot_id, wall_ms, mono_ms FROM clock_anchors');
    return new Map(rows.map((r) => [r.boot_id, { bootId: r.boot_id, wallMs: r.wall_ms, monoMs: r.mono_ms }]));
  }

  /** Records a judgement; `lastTrustedMs` only ever grows. */
  async writeJudgement(
    db: SqliteDatabase,
    j: { trusted: boolean; source: string; detail: string; bootId: string; monoMs: number; lastTrustedMs: number | null },
  ): Promise<void> {
    await db.run(
      `UPDATE clock_state SET trusted = ?, source = ?, detail = ?, boot_id = ?, judged_mono_ms = ?,
         last_trusted_ms = CASE WHEN ? IS NULL THEN last_trusted_ms WHEN last_trusted_ms IS NULL OR last_trusted_ms < ? THEN ? ELSE last_trusted_ms END
       WHERE id = 1`,
      [j.trusted ? 1 : 0, j.source, j.detail, j.bootId, j.monoMs, j.lastTrustedMs, j.lastTrustedMs, j.lastTrustedMs],
    );
  }

  /** The latest trusted reading of a boot (replaces the previous one of that boot). */
  async writeAnchor(db: SqliteDatabase, a: ClockAnchor): Promise<void> {
    await db.run(
      'INSERT INTO clock_anchors (boot_id, wall_ms, mono_ms) VALUES (?, ?, ?) ON CONFLICT (boot_id) DO UPDATE SET wall_ms = excluded.wall_ms, mono_ms = excluded.mono_ms',
      [a.bootId, a.wallMs, a.monoMs],
    );
  }

  async recordStep(db: SqliteDatabase, step: ClockStep): Promise<void> {
    await db.run('UPDATE clock_state SET steps = steps + 1, last_step_ms = ?, last_step_at = ?, last_step_boot = ? WHERE id = 1', [
      step.sizeMs,
      step.at,
      step.bootId,
    ]);
  }

  async addCorrected(db: SqliteDatabase, n: number): Promise<void> {
    if (n > 0) await db.run('UPDATE clock_state SET corrected = corrected + ? WHERE id = 1', [n]);
  }

  /** Drops the anchors no punch needs any more: every boot but `keep` (the current one and those with punches still to correct). */
  async pruneAnchors(db: SqliteDatabase, keep: readonly string[]): Promise<void> {
    await db.run('DELETE FROM clock_anchors WHERE boot_id NOT IN (SELECT value FROM json_each(?))', [JSON.stringify(keep)]);
  }
}
