/**
 * The change log of the template cache and an index snapshot's fit to it: every write of a
 * template is logged by triggers (template-schema.ts, migration 4), so a snapshot taken at change N
 * catches up with the changes after N instead of being rebuilt, unless the log was pruned past N
 * or the snapshot was taken of another database (`instance`).
 *
 * Tested through the `TemplateCache` facade: test/unit/store/template-cache/changes.test.ts.
 */
import { AgentError } from '../../core/errors.js';
import type { SqliteDatabase } from '../../core/sqlite.js';
import type { TemplateRow } from '../template-schema.js';
import { decryptRow, PAGE } from './envelope.js';
import type { ChangeState, TemplateChange } from './types.js';

/**
 * Where the cache stands for an index snapshot: its `instance` (random per database), the number
 * of the last change (`generation`), and up to which change the log was pruned.
 */
export async function changeState(db: SqliteDatabase): Promise<ChangeState> {
  const meta = await db.all<{ key: string; value: string }>('SELECT key, value FROM template_meta');
  const seq = await db.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'template_changes'");
  const value = (k: string) => meta.find((m) => m.key === k)?.value ?? '';
  return { instance: value('instance'), generation: seq?.seq ?? 0, prunedThrough: Number(value('pruned_through')) || 0 };
}

/**
 * What changed after change `after`, one entry per template (its latest change): `put` with the
 * template decrypted, or `del`; and `through`, the last change read. Applying them to an index
 * that holds the cache as of `after` (or later: they are idempotent) gives the cache as of
 * `through`. A template that does not decrypt goes to `onCorrupt` (and is skipped) when given.
 */
export async function changesSince(
  db: SqliteDatabase,
  key: Buffer,
  after: number,
  onCorrupt?: (err: AgentError) => void,
): Promise<{ through: number; changes: TemplateChange[] }> {
  const rows = await db.all<{ seq: number; id: string; op: 'put' | 'del' }>(
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
    for (const r of await db.all<TemplateRow>('SELECT * FROM templates WHERE id IN (SELECT value FROM json_each(?))', [
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
      changes.push({ op: 'put', template: decryptRow(key, row) });
    } catch (err) {
      if (!(err instanceof AgentError) || !onCorrupt) throw err;
      onCorrupt(err);
      changes.push({ op: 'del', id });
    }
  }
  return { through, changes };
}

/** Deletes the change log up to change `through` (an index snapshot holds it now). */
export async function pruneChanges(db: SqliteDatabase, through: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.run('DELETE FROM template_changes WHERE seq <= ?', [through]);
    await tx.run("UPDATE template_meta SET value = CAST(MAX(CAST(value AS INTEGER), ?) AS TEXT) WHERE key = 'pruned_through'", [through]);
  });
}
