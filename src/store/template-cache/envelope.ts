/**
 * The template cache's crypto envelope over its rows (the sealing itself is template-crypto.ts):
 * the key-check row sealed with the first key, so a key other than the one the cache was created
 * with is `STORE_TEMPLATE_KEY_WRONG` at open and never looks like an empty cache; a row opened
 * into a template, or `STORE_TEMPLATE_CORRUPT` when its blob was altered or moved to another row;
 * every blob tried for the integrity check; and the key tried for doctor, with or without a
 * migrated cache (`verifyTemplateKey`).
 *
 * Tested through the `TemplateCache` facade: test/unit/store/template-cache/envelope.test.ts.
 */
import { existsSync } from 'node:fs';
import { AgentError } from '../../core/errors.js';
import { SqliteDatabase } from '../../core/sqlite.js';
import { agentDatabasePath } from '../agent-db.js';
import { checkTemplateKey, openTemplate, sealTemplate } from '../template-crypto.js';
import type { TemplateRow } from '../template-schema.js';
import type { IntegrityReport, KeyVerdict, StoredTemplate, TemplateMeta } from './types.js';

const KEY_CHECK_PLAINTEXT = Buffer.from('edge-agent template key check v1', 'utf8');
const KEY_CHECK_ID = '#key-check';
/** Rows read per statement when walking the templates (an index build, a catch-up, the integrity check). */
export const PAGE = 500;

/** The row's metadata (in clear). */
export function toMeta(r: TemplateRow): TemplateMeta {
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

/**
 * At open: the key must open the key-check row; without one (a new cache) it is sealed now with
 * this key, after trying the key on a template should the file hold some (a damaged or foreign file).
 */
export async function checkOrSealKey(db: SqliteDatabase, key: Buffer, now: () => Date): Promise<void> {
  const row = await db.get<{ nonce: Buffer; blob: Buffer }>('SELECT nonce, blob FROM template_key_check WHERE id = 1');
  if (row) {
    const plain = openTemplate(key, KEY_CHECK_ID, '', row.nonce, row.blob);
    if (!plain || !KEY_CHECK_PLAINTEXT.equals(Buffer.from(plain))) throw wrongKey(db.path);
    return;
  }
  await db.transaction(async (tx) => {
    const n = await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM templates');
    // Templates without a key check would come from a damaged or foreign file: try one.
    if (n && n.n > 0) {
      const r = await tx.get<TemplateRow>('SELECT * FROM templates LIMIT 1');
      if (r && !openTemplate(key, r.id, r.employee_code, r.nonce, r.blob)) throw wrongKey(db.path);
    }
    const sealed = sealTemplate(key, KEY_CHECK_ID, '', KEY_CHECK_PLAINTEXT);
    await tx.run('INSERT INTO template_key_check (id, nonce, blob, created_at) VALUES (1, ?, ?, ?)', [
      sealed.nonce,
      sealed.blob,
      now().toISOString(),
    ]);
  });
}

/** The row as a template, its data decrypted; `STORE_TEMPLATE_CORRUPT` when it does not decrypt. */
export function decryptRow(key: Buffer, r: TemplateRow): StoredTemplate {
  const data = openTemplate(key, r.id, r.employee_code, r.nonce, r.blob);
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

/** Every blob tried with this key, a page of rows at a time: how many templates, and which do not decrypt. */
export async function tryEveryBlob(
  db: SqliteDatabase,
  key: Buffer,
): Promise<{ templates: number; undecryptable: IntegrityReport['undecryptable'] }> {
  const undecryptable: IntegrityReport['undecryptable'] = [];
  let templates = 0;
  let after = -1;
  for (;;) {
    const rows = await db.all<TemplateRow & { rid: number }>(
      'SELECT rowid AS rid, id, employee_code, nonce, blob FROM templates WHERE rowid > ? ORDER BY rowid LIMIT ?',
      [after, PAGE],
    );
    for (const r of rows) {
      templates++;
      if (!openTemplate(key, r.id, r.employee_code, r.nonce, r.blob)) undecryptable.push({ id: r.id, employeeCode: r.employee_code });
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.rid;
  }
  return { templates, undecryptable };
}

/** For doctor: the key-check row and up to `sample` templates decrypt with this key. */
export async function verifyKey(db: SqliteDatabase, key: Buffer, sample: number): Promise<KeyVerdict> {
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
    return await verifyKey(db, key, 20);
  } finally {
    await db.close();
  }
}
