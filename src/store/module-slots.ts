/**
 * Which employee's module template sits in which slot of which scanner. Serial fingerprint
 * modules are used as a cache of the most active employees' templates; this table is the map
 * from a module's search result (a slot) back to a person.
 *
 * Tested in test/integration/agent-e2e.test.ts (the agent places a person's module template in a
 * slot at start and identifies by the module's own search) and
 * test/integration/agent-site-sync.test.ts (taken off the module on delete).
 */
import type { Migration, SqliteDatabase } from '../core/sqlite.js';

export const MODULE_SLOT_MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'module slot assignments',
    up: `
      CREATE TABLE module_slots (
        scanner_key TEXT NOT NULL,
        slot INTEGER NOT NULL,
        employee_code TEXT NOT NULL,
        template_id TEXT NOT NULL,
        placed_at INTEGER NOT NULL,
        PRIMARY KEY (scanner_key, slot)
      ) WITHOUT ROWID;
      CREATE INDEX module_slots_employee ON module_slots (employee_code);
    `,
  },
];

export interface SlotAssignment {
  slot: number;
  employeeCode: string;
  templateId: string;
}

export class ModuleSlots {
  readonly #db: SqliteDatabase;

  private constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  static async open(db: SqliteDatabase): Promise<ModuleSlots> {
    await db.migrate('module-slots', MODULE_SLOT_MIGRATIONS);
    return new ModuleSlots(db);
  }

  async owner(scannerKey: string, slot: number): Promise<string | null> {
    const row = await this.#db.get<{ employee_code: string }>('SELECT employee_code FROM module_slots WHERE scanner_key = ? AND slot = ?', [
      scannerKey,
      slot,
    ]);
    return row?.employee_code ?? null;
  }

  async list(scannerKey: string): Promise<SlotAssignment[]> {
    const rows = await this.#db.all<{ slot: number; employee_code: string; template_id: string }>(
      'SELECT slot, employee_code, template_id FROM module_slots WHERE scanner_key = ? ORDER BY slot',
      [scannerKey],
    );
    return rows.map((r) => ({ slot: r.slot, employeeCode: r.employee_code, templateId: r.template_id }));
  }

  async assign(scannerKey: string, a: SlotAssignment): Promise<void> {
    await this.#db.transaction((db) =>
      db.run('INSERT OR REPLACE INTO module_slots (scanner_key, slot, employee_code, template_id, placed_at) VALUES (?, ?, ?, ?, ?)', [
        scannerKey,
        a.slot,
        a.employeeCode,
        a.templateId,
        Date.now(),
      ]),
    );
  }

  async release(scannerKey: string, slot: number): Promise<void> {
    await this.#db.transaction((db) => db.run('DELETE FROM module_slots WHERE scanner_key = ? AND slot = ?', [scannerKey, slot]));
  }

  /** Slots holding this employee's templates, on every scanner (for deleting a person). */
  async slotsOf(employeeCode: string): Promise<Array<{ scannerKey: string; slot: number }>> {
    const rows = await this.#db.all<{ scanner_key: string; slot: number }>(
      'SELECT scanner_key, slot FROM module_slots WHERE employee_code = ?',
      [employeeCode],
    );
    return rows.map((r) => ({ scannerKey: r.scanner_key, slot: r.slot }));
  }

  async forgetScanner(scannerKey: string): Promise<void> {
    await this.#db.transaction((db) => db.run('DELETE FROM module_slots WHERE scanner_key = ?', [scannerKey]));
  }

  /**
   * Employees ordered by how often they punched since `sinceMs` (UTC ms), most active first,
   * from the outbox (delivered punches are kept for the retention period).
   */
  async mostActive(sinceMs: number, limit: number): Promise<Array<{ employeeCode: string; punches: number }>> {
    const rows = await this.#db.all<{ employee_code: string; n: number }>(
      'SELECT employee_code, COUNT(*) AS n FROM outbox_events WHERE created_at >= ? GROUP BY employee_code ORDER BY n DESC, employee_code LIMIT ?',
      [sinceMs, limit],
    );
    return rows.map((r) => ({ employeeCode: r.employee_code, punches: r.n }));
  }
}
