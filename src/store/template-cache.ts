/**
 * The encrypted template cache: users and their templates in the agent database (component
 * 'templates'). Metadata is in clear so the cache can be counted, listed and synced; the template
 * bytes are AES-256-GCM sealed per row (template-crypto.ts).
 *
 * A missing key is `STORE_TEMPLATE_KEY_MISSING`; a key other than the one the cache was created
 * with is `STORE_TEMPLATE_KEY_WRONG` at open (a key-check row is sealed with the first key), so a
 * wrong key never looks like an empty cache. Deleting a user deletes their templates (foreign key,
 * cascade). `added`/`removed` events let the in-memory indexes follow changes incrementally.
 *
 * Each person also has a site-sync version (person_versions, migration 2) that only grows and
 * outlives a deletion: `replacePerson` and `deletePerson` change the templates only together with
 * a higher version, in one transaction, so a stale or replayed site record changes nothing.
 *
 * This class writes (users, templates, person versions, with their events) and is the facade
 * every caller imports; the rest is one module per concern in `template-cache/`: `envelope.ts`
 * (the key check, rows decrypted, the key tried for doctor), `queries.ts` (reads, counts, the
 * integrity report) and `changes.ts` (the change log an index snapshot catches up from).
 */
import { randomUUID } from 'node:crypto';
import { checkEmployeeCode as checkCode, EMPLOYEE_CODE_RULE } from '../api/employee-code.js';
import { AgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import { TEMPLATE_MODALITIES, type TemplateModality } from '../core/modality.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { changeState, changesSince, pruneChanges } from './template-cache/changes.js';
import { checkOrSealKey, verifyKey } from './template-cache/envelope.js';
import {
  countsByModality,
  getTemplate,
  getUser,
  integrityCheck,
  listTemplateMeta,
  listTemplates,
  listUsers,
  maxVersion,
} from './template-cache/queries.js';
import type {
  ChangeState,
  IntegrityReport,
  KeyVerdict,
  NewPersonVersion,
  NewTemplate,
  StoredTemplate,
  TemplateCacheEvents,
  TemplateCacheOptions,
  TemplateChange,
  TemplateMeta,
  TemplateUser,
} from './template-cache/types.js';
import { checkTemplateKey, sealTemplate } from './template-crypto.js';
import { FORMAT_MODALITY, type PersonVersion, type PersonVersionRow, TEMPLATE_MIGRATIONS } from './template-schema.js';

export { verifyTemplateKey } from './template-cache/envelope.js';
export type * from './template-cache/types.js';
export type { PersonVersion, TemplateFormat } from './template-schema.js';

function toPersonVersion(r: PersonVersionRow): PersonVersion {
  return {
    employeeCode: r.employee_code,
    version: r.version,
    deleted: r.deleted === 1,
    digest: r.digest,
    origin: r.origin,
    updatedAt: r.updated_at,
  };
}

/** True when `next` may replace `held`: a higher version, or the same one whose digest was not known. */
function supersedes(next: NewPersonVersion, held: PersonVersionRow | undefined): boolean {
  return !held || next.version > held.version || (next.version === held.version && held.digest === null);
}

function invalid(message: string, context: Record<string, unknown>, hint?: string): AgentError {
  return new AgentError('STORE_TEMPLATE_INVALID', message, context, hint ? { hint } : {});
}

export class TemplateCache extends TypedEmitter<TemplateCacheEvents> {
  readonly #db: SqliteDatabase;
  readonly #key: Buffer;
  readonly #now: () => Date;

  private constructor(db: SqliteDatabase, key: Buffer, now: () => Date) {
    super();
    this.#db = db;
    this.#key = key;
    this.#now = now;
  }

  /** Migrates the 'templates' component and checks the key (see the class comment). */
  static async open(db: SqliteDatabase, options: TemplateCacheOptions): Promise<TemplateCache> {
    const key = checkTemplateKey(options.key);
    await db.migrate('templates', TEMPLATE_MIGRATIONS);
    const cache = new TemplateCache(db, key, options.now ?? (() => new Date()));
    await checkOrSealKey(db, key, cache.#now);
    return cache;
  }

  /** Creates or updates a user (name fields optional; null clears, undefined keeps). */
  async upsertUser(user: {
    employeeCode: string;
    firstName?: string | null;
    lastName?: string | null;
    displayName?: string | null;
  }): Promise<void> {
    const employeeCode = checkEmployeeCode(user.employeeCode);
    await this.#db.transaction(async (db) => {
      await db.run(
        `INSERT INTO template_users (employee_code, first_name, last_name, display_name, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (employee_code) DO UPDATE SET
           first_name = CASE WHEN ? THEN excluded.first_name ELSE first_name END,
           last_name = CASE WHEN ? THEN excluded.last_name ELSE last_name END,
           display_name = CASE WHEN ? THEN excluded.display_name ELSE display_name END,
           updated_at = excluded.updated_at`,
        [
          employeeCode,
          user.firstName ?? null,
          user.lastName ?? null,
          user.displayName ?? null,
          this.#now().toISOString(),
          user.firstName !== undefined ? 1 : 0,
          user.lastName !== undefined ? 1 : 0,
          user.displayName !== undefined ? 1 : 0,
        ],
      );
    });
  }
  /** Stores a template (replacing one with the same id), creating its user if needed. */
  async addTemplate(t: NewTemplate): Promise<TemplateMeta> {
    return (await this.addTemplates([t]))[0]!;
  }

  /** Stores several templates in one transaction (a sync batch): all or none. */
  async addTemplates(list: NewTemplate[]): Promise<TemplateMeta[]> {
    const metas = list.map((t) => this.#validate(t));
    const replaced = await this.#db.transaction((db) => this.#insert(db, metas, list));
    this.#emitAdded(metas, list, replaced);
    return metas;
  }

  /** Inserts (or replaces by id) validated templates inside a transaction; resolves to what each id held before. */
  async #insert(
    db: SqliteDatabase,
    metas: TemplateMeta[],
    list: NewTemplate[],
  ): Promise<Array<{ employee_code: string; modality: TemplateModality } | undefined>> {
    const sealed = metas.map((m, i) => sealTemplate(this.#key, m.id, m.employeeCode, list[i]!.data));
    const old: Array<{ employee_code: string; modality: TemplateModality } | undefined> = [];
    const now = this.#now().toISOString();
    for (let i = 0; i < metas.length; i++) {
      const meta = metas[i]!;
      old.push(
        await db.get<{ employee_code: string; modality: TemplateModality }>('SELECT employee_code, modality FROM templates WHERE id = ?', [
          meta.id,
        ]),
      );
      await db.run('INSERT INTO template_users (employee_code, updated_at) VALUES (?, ?) ON CONFLICT (employee_code) DO NOTHING', [
        meta.employeeCode,
        now,
      ]);
      await db.run(
        `INSERT INTO templates (id, employee_code, modality, position, format, sensor_model, quality, created_at, source_terminal, version, nonce, blob)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET employee_code = excluded.employee_code, modality = excluded.modality, position = excluded.position,
           format = excluded.format, sensor_model = excluded.sensor_model, quality = excluded.quality, created_at = excluded.created_at,
           source_terminal = excluded.source_terminal, version = excluded.version, nonce = excluded.nonce, blob = excluded.blob`,
        [
          meta.id,
          meta.employeeCode,
          meta.modality,
          meta.position,
          meta.format,
          meta.sensorModel,
          meta.quality,
          meta.createdAt,
          meta.sourceTerminal,
          meta.version,
          sealed[i]!.nonce,
          sealed[i]!.blob,
        ],
      );
    }
    return old;
  }

  #emitAdded(
    metas: TemplateMeta[],
    list: NewTemplate[],
    replaced: Array<{ employee_code: string; modality: TemplateModality } | undefined>,
  ): void {
    for (let i = 0; i < metas.length; i++) {
      const meta = metas[i]!;
      const was = replaced[i];
      if (was && (was.employee_code !== meta.employeeCode || was.modality !== meta.modality)) {
        this.emit('removed', { id: meta.id, employeeCode: was.employee_code, modality: was.modality });
      }
      this.emit('added', { ...meta, data: list[i]!.data });
    }
  }

  async #heldVersion(db: SqliteDatabase, employeeCode: string): Promise<PersonVersionRow | undefined> {
    return db.get<PersonVersionRow>('SELECT * FROM person_versions WHERE employee_code = ?', [employeeCode]);
  }

  async #writeVersion(db: SqliteDatabase, v: NewPersonVersion, deleted: boolean): Promise<void> {
    await db.run(
      `INSERT INTO person_versions (employee_code, version, deleted, digest, origin, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (employee_code) DO UPDATE SET version = excluded.version, deleted = excluded.deleted, digest = excluded.digest, origin = excluded.origin, updated_at = excluded.updated_at`,
      [v.employeeCode, v.version, deleted ? 1 : 0, v.digest, v.origin, v.updatedAt ?? this.#now().toISOString()],
    );
  }

  #checkVersion(v: NewPersonVersion): string {
    if (!Number.isSafeInteger(v.version) || v.version < 0)
      throw invalid(`a person version must be a whole number from 0, got ${v.version}`, { version: v.version });
    return checkEmployeeCode(v.employeeCode);
  }

  /** The person's site-sync version (a tombstone after a deletion), or null when this terminal never heard of them. */
  async personVersion(employeeCode: string): Promise<PersonVersion | null> {
    const r = await this.#heldVersion(this.#db, employeeCode);
    return r ? toPersonVersion(r) : null;
  }

  /**
   * Records a version for a live person without touching their templates (after this terminal
   * published them); only above the version held. Resolves to whether it was written.
   */
  async notePersonVersion(v: NewPersonVersion): Promise<boolean> {
    const employeeCode = this.#checkVersion(v);
    return this.#db.transaction(async (db) => {
      if (!supersedes(v, await this.#heldVersion(db, employeeCode))) return false;
      await this.#writeVersion(db, { ...v, employeeCode }, false);
      return true;
    });
  }

  /**
   * Replaces all of a person's templates with `templates` and records version `v`, in one
   * transaction, when `v` is above the version held; resolves to false (nothing changed) otherwise.
   */
  async replacePerson(v: NewPersonVersion, templates: NewTemplate[]): Promise<boolean> {
    const employeeCode = this.#checkVersion(v);
    const metas = templates.map((t) => this.#validate({ ...t, employeeCode, version: v.version }));
    const outcome = await this.#db.transaction(async (db) => {
      if (!supersedes(v, await this.#heldVersion(db, employeeCode))) return null;
      const gone = await db.all<{ id: string; modality: TemplateModality }>('SELECT id, modality FROM templates WHERE employee_code = ?', [
        employeeCode,
      ]);
      await db.run('DELETE FROM templates WHERE employee_code = ?', [employeeCode]);
      const replaced = await this.#insert(db, metas, templates);
      await this.#writeVersion(db, { ...v, employeeCode }, false);
      return { gone, replaced };
    });
    if (!outcome) return false;
    for (const r of outcome.gone) this.emit('removed', { id: r.id, employeeCode, modality: r.modality });
    this.#emitAdded(metas, templates, outcome.replaced);
    return true;
  }

  /**
   * Deletes a person (user and templates) and records tombstone version `v`, in one transaction,
   * when `v` is above the version held; resolves to the templates removed, or null (nothing
   * changed) when `v` is not above.
   */
  async deletePerson(v: NewPersonVersion): Promise<number | null> {
    const employeeCode = this.#checkVersion(v);
    const gone = await this.#db.transaction(async (db) => {
      if (!supersedes(v, await this.#heldVersion(db, employeeCode))) return null;
      const rows = await db.all<{ id: string; modality: TemplateModality }>('SELECT id, modality FROM templates WHERE employee_code = ?', [
        employeeCode,
      ]);
      await db.run('DELETE FROM templates WHERE employee_code = ?', [employeeCode]);
      await db.run('DELETE FROM template_users WHERE employee_code = ?', [employeeCode]);
      await this.#writeVersion(db, { ...v, employeeCode }, true);
      return rows;
    });
    if (!gone) return null;
    for (const r of gone) this.emit('removed', { id: r.id, employeeCode, modality: r.modality });
    return gone.length;
  }

  #validate(t: NewTemplate): TemplateMeta {
    const employeeCode = checkEmployeeCode(t.employeeCode);
    if (!(TEMPLATE_MODALITIES as readonly string[]).includes(t.modality))
      throw invalid(`unknown modality "${t.modality}"`, { modality: t.modality }, `use one of ${TEMPLATE_MODALITIES.join(', ')}`);
    const formatModality = (FORMAT_MODALITY as Record<string, TemplateModality>)[t.format];
    if (!formatModality)
      throw invalid(`unknown template format "${t.format}"`, { format: t.format }, `use one of ${Object.keys(FORMAT_MODALITY).join(', ')}`);
    if (formatModality !== t.modality)
      throw invalid(`format ${t.format} is a ${formatModality} format, not ${t.modality}`, { format: t.format, modality: t.modality });
    if (!t.position || t.position.length > 32)
      throw invalid('a template needs a position (finger position or eye), at most 32 characters', { position: t.position });
    if (t.modality === 'iris' && !['left', 'right', 'unknown'].includes(t.position)) {
      throw invalid(`an iris template's position is the eye: left, right or unknown (got "${t.position}")`, { position: t.position });
    }
    if (t.data.length === 0) throw invalid('empty template data', { id: t.id });
    if (t.format === 'badge-hmac-sha256' && t.data.length !== 32)
      throw invalid(`a badge credential is a 32-byte keyed hash, got ${t.data.length} bytes`, { id: t.id });
    if (t.quality !== undefined && t.quality !== null && (!Number.isInteger(t.quality) || t.quality < 0 || t.quality > 255))
      throw invalid(`quality ${t.quality} is not 0-255`, { quality: t.quality });
    return {
      id: t.id ?? randomUUID(),
      employeeCode,
      modality: t.modality,
      position: t.position,
      format: t.format,
      sensorModel: t.sensorModel ?? null,
      quality: t.quality ?? null,
      createdAt: t.createdAt ?? this.#now().toISOString(),
      sourceTerminal: t.sourceTerminal ?? null,
      version: t.version ?? 0,
    };
  }

  async removeTemplate(id: string): Promise<boolean> {
    const row = await this.#db.transaction(async (db) => {
      const r = await db.get<{ employee_code: string; modality: TemplateModality }>(
        'SELECT employee_code, modality FROM templates WHERE id = ?',
        [id],
      );
      if (r) await db.run('DELETE FROM templates WHERE id = ?', [id]);
      return r;
    });
    if (!row) return false;
    this.emit('removed', { id, employeeCode: row.employee_code, modality: row.modality });
    return true;
  }

  /** Deletes a user and every template of theirs; resolves to the number of templates deleted. */
  async deleteUser(employeeCode: string): Promise<number> {
    const gone = await this.#db.transaction(async (db) => {
      const rows = await db.all<{ id: string; modality: TemplateModality }>('SELECT id, modality FROM templates WHERE employee_code = ?', [
        employeeCode,
      ]);
      await db.run('DELETE FROM templates WHERE employee_code = ?', [employeeCode]);
      await db.run('DELETE FROM template_users WHERE employee_code = ?', [employeeCode]);
      return rows;
    });
    for (const r of gone) this.emit('removed', { id: r.id, employeeCode, modality: r.modality });
    return gone.length;
  }

  // Reads (template-cache/queries.ts).

  getUser(employeeCode: string): Promise<TemplateUser | null> {
    return getUser(this.#db, employeeCode);
  }

  listUsers(): Promise<TemplateUser[]> {
    return listUsers(this.#db);
  }

  getTemplate(id: string): Promise<StoredTemplate | null> {
    return getTemplate(this.#db, this.#key, id);
  }

  /** Template metadata only (nothing decrypted). */
  listTemplateMeta(filter: { modality?: TemplateModality; employeeCode?: string } = {}): Promise<TemplateMeta[]> {
    return listTemplateMeta(this.#db, filter);
  }

  /** Every template (of one modality or employee), decrypted, a page of rows at a time; see `onCorrupt` in queries.ts. */
  listTemplates(
    filter: { modality?: TemplateModality; employeeCode?: string; onCorrupt?: (err: AgentError) => void } = {},
  ): AsyncGenerator<StoredTemplate> {
    return listTemplates(this.#db, this.#key, filter);
  }

  countsByModality(): Promise<Record<TemplateModality, number>> {
    return countsByModality(this.#db);
  }

  /** Highest sync version stored (for incremental site sync). */
  maxVersion(): Promise<number> {
    return maxVersion(this.#db);
  }

  /** SQLite's own check, then every blob decrypted with this key, and the counts. */
  integrityCheck(): Promise<IntegrityReport> {
    return integrityCheck(this.#db, this.#key);
  }

  /** For doctor: the key-check row and up to `sample` templates decrypt with this key. */
  verifyKey(sample = 20): Promise<KeyVerdict> {
    return verifyKey(this.#db, this.#key, sample);
  }

  // The change log (template-cache/changes.ts).

  /** Where the cache stands for an index snapshot: its instance, its last change, how far the log was pruned. */
  changeState(): Promise<ChangeState> {
    return changeState(this.#db);
  }

  /** What changed after change `after`, one entry per template (its latest change), and the last change read. */
  changesSince(after: number, onCorrupt?: (err: AgentError) => void): Promise<{ through: number; changes: TemplateChange[] }> {
    return changesSince(this.#db, this.#key, after, onCorrupt);
  }

  /** Deletes the change log up to change `through` (an index snapshot holds it now). */
  pruneChanges(through: number): Promise<void> {
    return pruneChanges(this.#db, through);
  }
}

/** The code in NFC by the shared rule (src/api/employee-code.ts), or STORE_TEMPLATE_INVALID. */
function checkEmployeeCode(code: string): string {
  const r = checkCode(code);
  if (!r.ok) throw invalid(r.problem, {}, `an employee code is ${EMPLOYEE_CODE_RULE}`);
  return r.code;
}
