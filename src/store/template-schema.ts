/**
 * Schema of the template cache (component 'templates' of the agent database): users, their
 * templates with metadata in clear and the template bytes encrypted (see template-crypto.ts), and
 * one key-check row that tells a wrong key from an empty cache.
 *
 * Migration 4: every write of a template is logged (`template_changes`, by triggers: its id and
 * put or del), so an index snapshot taken at change N catches up with the changes after N instead
 * of being rebuilt. `template_meta` holds the cache's `instance` (random, new with every new
 * database: a snapshot of another database never fits) and `pruned_through` (log entries up to
 * there were deleted: an older snapshot cannot catch up).
 */
import type { TemplateModality } from '../core/modality.js';
import type { Migration } from '../core/sqlite.js';

/**
 * Template formats and their modality: ISO/IEC 19794-2 and ANSI INCITS 378 minutiae records, the
 * agent's iris code v1, the R30x module's own character file, the GT-521 module's own template,
 * float32 face/eye embeddings, and a badge's keyed hash (HMAC-SHA256 of the card's credential,
 * never the card number itself: src/terminal/credentials.ts).
 */
export const FORMAT_MODALITY = {
  'iso19794-2': 'finger',
  ansi378: 'finger',
  'r30x-char': 'finger',
  gt521: 'finger',
  'iris-code-v1': 'iris',
  'embedding-f32': 'embedding',
  'badge-hmac-sha256': 'badge',
} as const satisfies Record<string, TemplateModality>;
export type TemplateFormat = keyof typeof FORMAT_MODALITY;

export const TEMPLATE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'template users, encrypted templates, key check',
    up: `
      CREATE TABLE template_users (
        employee_code TEXT PRIMARY KEY,
        first_name TEXT,
        last_name TEXT,
        display_name TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE templates (
        id TEXT PRIMARY KEY,
        employee_code TEXT NOT NULL REFERENCES template_users (employee_code) ON DELETE CASCADE,
        modality TEXT NOT NULL CHECK (modality IN ('finger', 'iris', 'embedding')),
        position TEXT NOT NULL,
        format TEXT NOT NULL,
        sensor_model TEXT,
        quality INTEGER,
        created_at TEXT NOT NULL,
        source_terminal TEXT,
        version INTEGER NOT NULL DEFAULT 0,
        nonce BLOB NOT NULL,
        blob BLOB NOT NULL
      );
      CREATE INDEX templates_employee ON templates (employee_code);
      CREATE INDEX templates_modality ON templates (modality);
      CREATE TABLE template_key_check (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        nonce BLOB NOT NULL,
        blob BLOB NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: 'person versions: the site-sync version of each person, deletions (tombstones) included',
    // One row per person the terminal has heard of, kept after a deletion (deleted = 1): a site
    // record whose version is not above it is refused, so a replayed old record cannot bring a
    // deleted person back. Filled from the templates' own versions on the way in.
    up: `
      CREATE TABLE person_versions (
        employee_code TEXT PRIMARY KEY,
        version INTEGER NOT NULL CHECK (version >= 0),
        deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
        digest TEXT,
        origin TEXT,
        updated_at TEXT NOT NULL
      );
      INSERT INTO person_versions (employee_code, version, deleted, digest, origin, updated_at)
        SELECT employee_code, MAX(version), 0, NULL, NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM templates GROUP BY employee_code;
    `,
  },
  {
    version: 3,
    description: 'badge credentials: modality badge (a keyed hash of the card, sealed like every template)',
    // SQLite cannot change a CHECK constraint in place: the table is rebuilt with the same rows
    // (nothing references templates; its foreign key to template_users is kept).
    up: `
      CREATE TABLE templates_v3 (
        id TEXT PRIMARY KEY,
        employee_code TEXT NOT NULL REFERENCES template_users (employee_code) ON DELETE CASCADE,
        modality TEXT NOT NULL CHECK (modality IN ('finger', 'iris', 'embedding', 'badge')),
        position TEXT NOT NULL,
        format TEXT NOT NULL,
        sensor_model TEXT,
        quality INTEGER,
        created_at TEXT NOT NULL,
        source_terminal TEXT,
        version INTEGER NOT NULL DEFAULT 0,
        nonce BLOB NOT NULL,
        blob BLOB NOT NULL
      );
      INSERT INTO templates_v3 (rowid, id, employee_code, modality, position, format, sensor_model, quality, created_at, source_terminal, version, nonce, blob)
        SELECT rowid, id, employee_code, modality, position, format, sensor_model, quality, created_at, source_terminal, version, nonce, blob FROM templates;
      DROP TABLE templates;
      ALTER TABLE templates_v3 RENAME TO templates;
      CREATE INDEX templates_employee ON templates (employee_code);
      CREATE INDEX templates_modality ON templates (modality);
    `,
  },
  {
    version: 4,
    description: 'change log of the templates (what an index snapshot must catch up on)',
    // IF NOT EXISTS throughout: a rebuild of the templates table (as migration 3 does) drops its
    // triggers, and running this again puts them back without touching the log.
    up: `
      CREATE TABLE IF NOT EXISTS template_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('put', 'del'))
      );
      CREATE TABLE IF NOT EXISTS template_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT OR IGNORE INTO template_meta (key, value) VALUES ('instance', lower(hex(randomblob(16)))), ('pruned_through', '0');
      CREATE TRIGGER IF NOT EXISTS templates_log_insert AFTER INSERT ON templates BEGIN
        INSERT INTO template_changes (id, op) VALUES (NEW.id, 'put');
      END;
      CREATE TRIGGER IF NOT EXISTS templates_log_update AFTER UPDATE ON templates BEGIN
        INSERT INTO template_changes (id, op) SELECT OLD.id, 'del' WHERE OLD.id <> NEW.id;
        INSERT INTO template_changes (id, op) VALUES (NEW.id, 'put');
      END;
      CREATE TRIGGER IF NOT EXISTS templates_log_delete AFTER DELETE ON templates BEGIN
        INSERT INTO template_changes (id, op) VALUES (OLD.id, 'del');
      END;
    `,
  },
];

/** A person's site-sync version as a terminal keeps it (person_versions). */
export interface PersonVersion {
  employeeCode: string;
  /** Only grows: a record (or tombstone) is applied only above it. */
  version: number;
  /** True after a deletion (a tombstone): the person has no templates here. */
  deleted: boolean;
  /** SHA-256 (hex) of the record's plaintext, telling a repeat of the same record from another one of the same version; null when not known (filled from the templates). */
  digest: string | null;
  origin: string | null;
  updatedAt: string;
}

export interface PersonVersionRow {
  employee_code: string;
  version: number;
  deleted: number;
  digest: string | null;
  origin: string | null;
  updated_at: string;
}

export interface TemplateRow {
  id: string;
  employee_code: string;
  modality: TemplateModality;
  position: string;
  format: TemplateFormat;
  sensor_model: string | null;
  quality: number | null;
  created_at: string;
  source_terminal: string | null;
  version: number;
  nonce: Buffer;
  blob: Buffer;
}

export interface UserRow {
  employee_code: string;
  first_name: string | null;
  last_name: string | null;
  display_name: string | null;
  updated_at: string;
}
