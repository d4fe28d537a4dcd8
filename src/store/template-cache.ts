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
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { checkEmployeeCode as checkCode, EMPLOYEE_CODE_RULE } from '../api/employee-code.js';
import { AgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import { SqliteDatabase } from '../core/sqlite.js';
import { agentDatabasePath } from './agent-db.js';
import { checkTemplateKey, openTemplate, sealTemplate } from './template-crypto.js';
import { TEMPLATE_MODALITIES, type TemplateModality } from '../core/modality.js';
import {
  FORMAT_MODALITY,
  TEMPLATE_MIGRATIONS,
  type PersonVersion,
  type PersonVersionRow,
  type TemplateFormat,
  type TemplateRow,
  type UserRow,
} from './template-schema.js';

export type { PersonVersion, TemplateFormat } from './template-schema.js';

/** A version to record: `updatedAt` defaults to now. */
export type NewPersonVersion = Omit<PersonVersion, 'deleted' | 'updatedAt'> & { updatedAt?: string };

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

const KEY_CHECK_PLAINTEXT = Buffer.from('edge-agent template key check v1', 'utf8');
const KEY_CHECK_ID = '#key-check';
const PAGE = 500;

export interface TemplateMeta {
  id: string;
  employeeCode: string;
  modality: TemplateModality;
  /** Finger position (e.g. "right-index" or an ISO position number), eye ("left", "right"), or a badge's label ("badge", "card-2"). */
  position: string;
  format: TemplateFormat;
  sensorModel: string | null;
  quality: number | null;
  createdAt: string;
  sourceTerminal: string | null;
  /** Sync version from the site (0 = created locally). */
  version: number;
}

export interface StoredTemplate extends TemplateMeta {
  data: Uint8Array;
}

export interface NewTemplate {
  id?: string;
  employeeCode: string;
  modality: TemplateModality;
  position: string;
  format: TemplateFormat;
  data: Uint8Array;
  sensorModel?: string | null;
  quality?: number | null;
  createdAt?: string;
  sourceTerminal?: string | null;
  version?: number;
}

export interface TemplateUser {
  employeeCode: string;
  firstName: string | null;
  lastName: string | null;
  displayName: string | null;
  updatedAt: string;
}

export interface TemplateCacheEvents extends Record<string, unknown> {
  /** A template was stored (new or replaced); carries the bytes for the index, never log them. */
  added: StoredTemplate;
  removed: { id: string; employeeCode: string; modality: TemplateModality };
}

export interface IntegrityReport {
  ok: boolean;
  /** `PRAGMA integrity_check` lines ('ok' when sound). */
  sqlite: string[];
  users: number;
  templates: number;
  byModality: Record<TemplateModality, number>;
  /** Templates whose blob does not decrypt (tampered, truncated, or moved to another row). */
  undecryptable: Array<{ id: string; employeeCode: string }>;
}

/** See `TemplateCache.changeState`. */
export interface ChangeState {
  instance: string;
  generation: number;
  prunedThrough: number;
}

export type TemplateChange = { op: 'put'; template: StoredTemplate } | { op: 'del'; id: string };

export interface TemplateCacheOptions {
  key: Buffer | null | undefined;
  now?: () => Date;
}

function toMeta(r: TemplateRow): TemplateMeta {
  return {
    id: r.id,
    employeeCode: r.employee_code,
    modality: r.modality,
    position: r.position,
    format: r.format,
    sensorModel: r.sensor_model,
    quality: r.quality,
    createdAt: r.created_at,
    sourceTerminal: r.source_terminal,
    version: r.version,
  };
}

function invalid(message: string, context: Record<string, unknown>, hint?: string): AgentError {
  return new AgentError('STORE_TEMPLATE_INVALID', message, context, hint ? { hint } : {});
}

function emptyCounts(): Record<TemplateModality, number> {
  return { finger: 0, iris: 0, embedding: 0, badge: 0 };
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
    await cache.#checkOrSealKey();
    return cache;
  }

  async #checkOrSealKey(): Promise<void> {
    const row = await this.#db.get<{ nonce: Buffer; blob: Buffer }>('SELECT nonce, blob FROM template_key_check WHERE id = 1');
    if (row) {
      const plain = openTemplate(this.#key, KEY_CHECK_ID, '', row.nonce, row.blob);
      if (!plain || !KEY_CHECK_PLAINTEXT.equals(Buffer.from(plain))) throw wrongKey(this.#db.path);
      return;
    }
    await this.#db.transaction(async (db) => {
      const n = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM templates');
      // Templates without a key check would come from a damaged or foreign file: try one.
      if (n && n.n > 0) {
        const r = await db.get<TemplateRow>('SELECT * FROM templates LIMIT 1');
        if (r && !openTemplate(this.#key, r.id, r.employee_code, r.nonce, r.blob)) throw wrongKey(this.#db.path);
      }
      const sealed = sealTemplate(this.#key, KEY_CHECK_ID, '', KEY_CHECK_PLAINTEXT);
      await db.run('INSERT INTO template_key_check (id, nonce, blob, created_at) VALUES (1, ?, ?, ?)', [
        sealed.nonce,
        sealed.blob,
        this.#now().toISOString(),
      ]);
    });
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

  async getUser(employeeCode: string): Promise<TemplateUser | null> {
    const r = await this.#db.get<UserRow>('SELECT * FROM template_users WHERE employee_code = ?', [employeeCode]);
    return r
      ? {
          employeeCode: r.employee_code,
          firstName: r.first_name,
          lastName: r.last_name,
          displayName: r.display_name,
          updatedAt: r.updated_at,
        }
      : null;
  }

  async listUsers(): Promise<TemplateUser[]> {
    const rows = await this.#db.all<UserRow>('SELECT * FROM template_users ORDER BY employee_code');
    return rows.map((r) => ({
      employeeCode: r.employee_code,
      firstName: r.first_name,
      lastName: r.last_name,
      displayName: r.display_name,
      updatedAt: r.updated_at,
    }));
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

  #decrypt(r: TemplateRow): StoredTemplate {
    const data = openTemplate(this.#key, r.id, r.employee_code, r.nonce, r.blob);
    if (!data) {
      throw new AgentError(
        'STORE_TEMPLATE_CORRUPT',
        `template ${r.id} of ${r.employee_code} does not decrypt: it was altered or moved to another row`,
        { id: r.id, employeeCode: r.employee_code },
        {
          hint: 'run "edge-agent doctor"; delete the template and enrol or sync it again',
        },
      );
    }
    return { ...toMeta(r), data };
  }

  async getTemplate(id: string): Promise<StoredTemplate | null> {
    const r = await this.#db.get<TemplateRow>('SELECT * FROM templates WHERE id = ?', [id]);
    return r ? this.#decrypt(r) : null;
  }

  /** Template metadata only (nothing decrypted). */
  async listTemplateMeta(filter: { modality?: TemplateModality; employeeCode?: string } = {}): Promise<TemplateMeta[]> {
    const rows = await this.#db.all<TemplateRow>(
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
  async *listTemplates(
    filter: { modality?: TemplateModality; employeeCode?: string; onCorrupt?: (err: AgentError) => void } = {},
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
      const rows = await this.#db.all<TemplateRow & { rid: number }>(sql, [...params, after, PAGE]);
      for (const r of rows) {
        try {
          yield this.#decrypt(r);
        } catch (err) {
          if (!(err instanceof AgentError) || !filter.onCorrupt) throw err;
          filter.onCorrupt(err);
        }
      }
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.rid;
    }
  }

  /**
   * Where the cache stands for an index snapshot: its `instance` (random per database), the number
   * of the last change (`generation`), and up to which change the log was pruned.
   */
  async changeState(): Promise<ChangeState> {
    const meta = await this.#db.all<{ key: string; value: string }>('SELECT key, value FROM template_meta');
    const seq = await this.#db.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'template_changes'");
    const value = (k: string) => meta.find((m) => m.key === k)?.value ?? '';
    return { instance: value('instance'), generation: seq?.seq ?? 0, prunedThrough: Number(value('pruned_through')) || 0 };
  }

  /**
   * What changed after change `after`, one entry per template (its latest change): `put` with the
   * template decrypted, or `del`; and `through`, the last change read. Applying them to an index
   * that holds the cache as of `after` (or later: they are idempotent) gives the cache as of
   * `through`. A template that does not decrypt goes to `onCorrupt` (and is skipped) when given.
   */
  async changesSince(after: number, onCorrupt?: (err: AgentError) => void): Promise<{ through: number; changes: TemplateChange[] }> {
    const rows = await this.#db.all<{ seq: number; id: string; op: 'put' | 'del' }>(
      'SELECT seq, id, op FROM template_changes WHERE seq > ? ORDER BY seq',
      [after],
    );
    const latest = new Map<string, 'put' | 'del'>();
    let through = after;
    for (const r of rows) {
      latest.set(r.id, r.op);
      through = r.seq;
    }
    const changes: TemplateChange[] = [];
    const puts = [...latest].filter(([, op]) => op === 'put').map(([id]) => id);
    const found = new Map<string, TemplateRow>();
    for (let i = 0; i < puts.length; i += PAGE) {
      for (const r of await this.#db.all<TemplateRow>('SELECT * FROM templates WHERE id IN (SELECT value FROM json_each(?))', [
        JSON.stringify(puts.slice(i, i + PAGE)),
      ]))
        found.set(r.id, r);
    }
    for (const [id, op] of latest) {
      const row = op === 'put' ? found.get(id) : undefined;
      if (!row) {
        changes.push({ op: 'del', id });
        continue;
      }
      try {
        changes.push({ op: 'put', template: this.#decrypt(row) });
      } catch (err) {
        if (!(err instanceof AgentError) || !onCorrupt) throw err;
        onCorrupt(err);
        changes.push({ op: 'del', id });
      }
    }
    return { through, changes };
  }

  /** Deletes the change log up to change `through` (an index snapshot holds it now). */
  async pruneChanges(through: number): Promise<void> {
    await this.#db.transaction(async (db) => {
      await db.run('DELETE FROM template_changes WHERE seq <= ?', [through]);
      await db.run("UPDATE template_meta SET value = CAST(MAX(CAST(value AS INTEGER), ?) AS TEXT) WHERE key = 'pruned_through'", [through]);
    });
  }

  async countsByModality(): Promise<Record<TemplateModality, number>> {
    const out = emptyCounts();
    for (const r of await this.#db.all<{ modality: TemplateModality; n: number }>(
      'SELECT modality, COUNT(*) AS n FROM templates GROUP BY modality',
    ))
      out[r.modality] = r.n;
    return out;
  }

  /** Highest sync version stored (for incremental site sync). */
  async maxVersion(): Promise<number> {
    const r = await this.#db.get<{ v: number | null }>('SELECT MAX(version) AS v FROM templates');
    return r?.v ?? 0;
  }

  /** SQLite's own check, then every blob decrypted with this key, and the counts. */
  async integrityCheck(): Promise<IntegrityReport> {
    const sqlite = await this.#db.integrityCheck();
    const undecryptable: IntegrityReport['undecryptable'] = [];
    let templates = 0;
    let after = -1;
    for (;;) {
      const rows = await this.#db.all<TemplateRow & { rid: number }>(
        'SELECT rowid AS rid, id, employee_code, nonce, blob FROM templates WHERE rowid > ? ORDER BY rowid LIMIT ?',
        [after, PAGE],
      );
      for (const r of rows) {
        templates++;
        if (!openTemplate(this.#key, r.id, r.employee_code, r.nonce, r.blob))
          undecryptable.push({ id: r.id, employeeCode: r.employee_code });
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.rid;
    }
    const users = (await this.#db.get<{ n: number }>('SELECT COUNT(*) AS n FROM template_users'))?.n ?? 0;
    const byModality = await this.countsByModality();
    return {
      ok: sqlite.length === 1 && sqlite[0] === 'ok' && undecryptable.length === 0,
      sqlite,
      users,
      templates,
      byModality,
      undecryptable,
    };
  }

  /** For doctor: the key-check row and up to `sample` templates decrypt with this key. */
  verifyKey(sample = 20): Promise<KeyVerdict> {
    return tryKey(this.#db, this.#key, sample);
  }
}

export interface KeyVerdict {
  ok: boolean;
  checked: number;
  detail?: string;
}

async function tryKey(db: SqliteDatabase, key: Buffer, sample: number): Promise<KeyVerdict> {
  const row = await db.get<{ nonce: Buffer; blob: Buffer }>('SELECT nonce, blob FROM template_key_check WHERE id = 1');
  if (row && !openTemplate(key, KEY_CHECK_ID, '', row.nonce, row.blob))
    return { ok: false, checked: 0, detail: 'the key does not open the key-check row of the template cache' };
  const rows = await db.all<TemplateRow>('SELECT id, employee_code, nonce, blob FROM templates ORDER BY rowid LIMIT ?', [sample]);
  const bad = rows.filter((r) => !openTemplate(key, r.id, r.employee_code, r.nonce, r.blob)).length;
  if (bad > 0)
    return {
      ok: false,
      checked: rows.length,
      detail: `${bad} of ${rows.length} templates tried do not decrypt (run the template integrity check)`,
    };
  return { ok: true, checked: rows.length };
}

function wrongKey(path: string): AgentError {
  return new AgentError(
    'STORE_TEMPLATE_KEY_WRONG',
    `the template key does not match the one the template cache in ${path} was created with`,
    { path },
    {
      hint: 'restore the templateKey the templates were stored with (secrets file or systemd credential "template-key"); or, to start over, delete the templates and sync them again from the site',
    },
  );
}

/** The code in NFC by the shared rule (src/api/employee-code.ts), or STORE_TEMPLATE_INVALID. */
function checkEmployeeCode(code: string): string {
  const r = checkCode(code);
  if (!r.ok) throw invalid(r.problem, {}, `an employee code is ${EMPLOYEE_CODE_RULE}`);
  return r.code;
}

/**
 * Doctor's key check (`TemplateKeyVerifier`): opens `<dataDir>/agent.db` without migrating it and
 * tries the key on the key-check row and a sample of templates.
 */
export async function verifyTemplateKey(dataDir: string, key: Buffer): Promise<KeyVerdict> {
  checkTemplateKey(key);
  const path = agentDatabasePath(dataDir);
  if (!existsSync(path)) return { ok: true, checked: 0 };
  const db = await SqliteDatabase.open(path, { readonly: true });
  try {
    const has = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'template_key_check'");
    if (!has?.n) return { ok: true, checked: 0 };
    return await tryKey(db, key, 20);
  } finally {
    await db.close();
  }
}
