/**
 * Schema of the template cache (component 'templates' of the agent database): users, their
 * templates with metadata in clear and the template bytes encrypted (see template-crypto.ts), and
 * one key-check row that tells a wrong key from an empty cache.
 *
 * Migration 2: every write of a template is logged (`template_changes`, by triggers: its id and
 * put or del), so an index snapshot taken at change N catches up with the changes after N instead
 * of being rebuilt. `template_meta` holds the cache's `instance` (random, new with every new
 * database: a snapshot of another database never fits) and `pruned_through` (log entries up to
 * there were deleted: an older snapshot cannot catch up).
 */
import type { Migration } from '../core/sqlite.js';

export const MODALITIES = ['finger', 'iris', 'embedding'] as const;
export type Modality = (typeof MODALITIES)[number];

/**
 * Template formats and their modality: ISO/IEC 19794-2 and ANSI INCITS 378 minutiae records, the
 * agent's iris code v1, the R30x module's own character file, the GT-521 module's own template,
 * and float32 face/eye embeddings.
 */
export const FORMAT_MODALITY = {
  'iso19794-2': 'finger',
  ansi378: 'finger',
  'r30x-char': 'finger',
  gt521: 'finger',
  'iris-code-v1': 'iris',
  'embedding-f32': 'embedding',
} as const satisfies Record<string, Modality>;
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
    description: 'change log of the templates (what an index snapshot must catch up on)',
    up: `
      CREATE TABLE template_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('put', 'del'))
      );
      CREATE TABLE template_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO template_meta (key, value) VALUES ('instance', lower(hex(randomblob(16)))), ('pruned_through', '0');
      CREATE TRIGGER templates_log_insert AFTER INSERT ON templates BEGIN
        INSERT INTO template_changes (id, op) VALUES (NEW.id, 'put');
      END;
      CREATE TRIGGER templates_log_update AFTER UPDATE ON templates BEGIN
        INSERT INTO template_changes (id, op) SELECT OLD.id, 'del' WHERE OLD.id <> NEW.id;
        INSERT INTO template_changes (id, op) VALUES (NEW.id, 'put');
      END;
      CREATE TRIGGER templates_log_delete AFTER DELETE ON templates BEGIN
        INSERT INTO template_changes (id, op) VALUES (OLD.id, 'del');
      END;
    `,
  },
];

export interface TemplateRow {
  id: string;
  employee_code: string;
  modality: Modality;
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
