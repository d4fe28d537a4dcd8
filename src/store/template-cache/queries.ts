/**
 * Reading the template cache back: users, one template or every template of a modality or an
 * employee (decrypted, a page at a time), metadata only (nothing decrypted), the counts, the
 * highest sync version, and the integrity report.
 *
 * Tested through the `TemplateCache` facade: test/unit/store/template-cache/queries.test.ts (the
 * integrity report with the envelope's tests).
 */
import { AgentError } from '../../core/errors.js';
import type { SqliteDatabase } from '../../core/sqlite.js';
import type { TemplateModality } from '../../core/modality.js';
import type { TemplateRow, UserRow } from '../template-schema.js';
import { decryptRow, PAGE, toMeta, tryEveryBlob } from './envelope.js';
import type { IntegrityReport, StoredTemplate, TemplateMeta, TemplateUser } from './types.js';

function toUser(r: UserRow): TemplateUser {
  return {
    employeeCode: r.employee_code,
    firstName: r.first_name,
    lastName: r.last_name,
    displayName: r.display_name,
    updatedAt: r.updated_at,
  };
}

export async function getUser(db: SqliteDatabase, employeeCode: string): Promise<TemplateUser | null> {
  const r = await db.get<UserRow>('SELECT * FROM template_users WHERE employee_code = ?', [employeeCode]);
  return r ? toUser(r) : null;
}

export async function listUsers(db: SqliteDatabase): Promise<TemplateUser[]> {
  const rows = await db.all<UserRow>('SELECT * FROM template_users ORDER BY employee_code');
  return rows.map(toUser);
}

export async function getTemplate(db: SqliteDatabase, key: Buffer, id: string): Promise<StoredTemplate | null> {
  const r = await db.get<TemplateRow>('SELECT * FROM templates WHERE id = ?', [id]);
  return r ? decryptRow(key, r) : null;
}

/** Template metadata only (nothing decrypted). */
export async function listTemplateMeta(
  db: SqliteDatabase,
  filter: { modality?: TemplateModality; employeeCode?: string },
): Promise<TemplateMeta[]> {
  const rows = await db.all<TemplateRow>(
    'SELECT id, employee_code, modality, position, format, sensor_model, quality, created_at, source_terminal, version FROM templates WHERE (? IS NULL OR modality = ?) AND (? IS NULL OR employee_code = ?) ORDER BY employee_code, id',
    [filter.modality ?? null, filter.modality ?? null, filter.employeeCode ?? null, filter.employeeCode ?? null],
  );
  return rows.map(toMeta);
}

/**
 * Every template (of one modality or employee), decrypted, a page of rows at a time: building an
 * index never holds the whole table in memory twice. A template that does not decrypt throws
 * `STORE_TEMPLATE_CORRUPT` unless `onCorrupt` takes it (then it is skipped).
 */
export async function* listTemplates(
  db: SqliteDatabase,
  key: Buffer,
  filter: { modality?: TemplateModality; employeeCode?: string; onCorrupt?: (err: AgentError) => void },
): AsyncGenerator<StoredTemplate> {
  let after = -1;
  // One statement per filter, so SQLite walks the modality (or employee) index, not every row.
  const where = [
    filter.modality !== undefined ? 'modality = ?' : null,
    filter.employeeCode !== undefined ? 'employee_code = ?' : null,
  ].filter(Boolean);
  const sql = `SELECT rowid AS rid, * FROM templates WHERE ${[...where, 'rowid > ?'].join(' AND ')} ORDER BY rowid LIMIT ?`;
  const params = [filter.modality, filter.employeeCode].filter((v): v is string => v !== undefined);
  for (;;) {
    const rows = await db.all<TemplateRow & { rid: number }>(sql, [...params, after, PAGE]);
    for (const r of rows) {
      try {
        yield decryptRow(key, r);
      } catch (err) {
        if (!(err instanceof AgentError) || !filter.onCorrupt) throw err;
        filter.onCorrupt(err);
      }
    }
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.rid;
  }
}

export async function countsByModality(db: SqliteDatabase): Promise<Record<TemplateModality, number>> {
  const out: Record<TemplateModality, number> = { finger: 0, iris: 0, embedding: 0, badge: 0 };
  for (const r of await db.all<{ modality: TemplateModality; n: number }>(
    'SELECT modality, COUNT(*) AS n FROM templates GROUP BY modality',
  ))
    out[r.modality] = r.n;
  return out;
}

/** Highest sync version stored (for incremental site sync). */
export async function maxVersion(db: SqliteDatabase): Promise<number> {
  const r = await db.get<{ v: number | null }>('SELECT MAX(version) AS v FROM templates');
  return r?.v ?? 0;
}

/** SQLite's own check, then every blob decrypted with this key, and the counts. */
export async function integrityCheck(db: SqliteDatabase, key: Buffer): Promise<IntegrityReport> {
  const sqlite = await db.integrityCheck();
  const { templates, undecryptable } = await tryEveryBlob(db, key);
  const users = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM template_users'))?.n ?? 0;
  const byModality = await countsByModality(db);
  return {
    ok: sqlite.length === 1 && sqlite[0] === 'ok' && undecryptable.length === 0,
    sqlite,
    users,
    templates,
    byModality,
    undecryptable,
  };
}
