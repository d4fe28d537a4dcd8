import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase, agentDatabasePath } from '../../../src/store/agent-db.js';
import { TemplateCache, verifyTemplateKey, type NewTemplate, type StoredTemplate } from '../../../src/store/template-cache.js';

let dir: string;
let db: SqliteDatabase;
const key = randomBytes(32);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'template-cache-'));
  db = await openAgentDatabase(dir);
});
afterEach(async () => {
  await db.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

function finger(employeeCode: string, data: Uint8Array, extra: Partial<NewTemplate> = {}): NewTemplate {
  return {
    employeeCode,
    modality: 'finger',
    position: 'right-index',
    format: 'iso19794-2',
    data,
    sensorModel: 'R503',
    quality: 80,
    sourceTerminal: 'gate-1',
    ...extra,
  };
}

async function reopen(k: Buffer | null = key): Promise<TemplateCache> {
  await db.close();
  db = await openAgentDatabase(dir);
  return TemplateCache.open(db, { key: k });
}

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('TemplateCache', () => {
  it('stores, reads back and counts templates with their metadata', async () => {
    const cache = await TemplateCache.open(db, { key });
    const data = randomBytes(300);
    const meta = await cache.addTemplate(finger('E001', data, { id: 't1', version: 7 }));
    await cache.addTemplate({
      employeeCode: 'E001',
      modality: 'iris',
      position: 'left',
      format: 'iris-code-v1',
      data: randomBytes(528),
      quality: 90,
    });
    expect(meta).toMatchObject({
      id: 't1',
      employeeCode: 'E001',
      modality: 'finger',
      position: 'right-index',
      format: 'iso19794-2',
      sensorModel: 'R503',
      quality: 80,
      sourceTerminal: 'gate-1',
      version: 7,
    });
    const got = (await cache.getTemplate('t1')) as StoredTemplate;
    expect(Buffer.from(got.data).equals(data)).toBe(true);
    expect(await cache.countsByModality()).toEqual({ finger: 1, iris: 1, embedding: 0, badge: 0 });
    expect(await cache.maxVersion()).toBe(7);
    expect((await cache.listUsers()).map((u) => u.employeeCode)).toEqual(['E001']);
    await cache.upsertUser({ employeeCode: 'E001', firstName: 'Ada' });
    await cache.upsertUser({ employeeCode: 'E001', lastName: 'Lovelace' });
    expect(await cache.getUser('E001')).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' });
  });

  it('never writes the template bytes in clear to the database files', async () => {
    const cache = await TemplateCache.open(db, { key });
    const secret = Buffer.concat([Buffer.from('FMR\0 20\0'), randomBytes(200)]);
    await cache.addTemplate(finger('PLAIN-EMP-77', secret));
    await db.close();
    const files = [agentDatabasePath(dir), `${agentDatabasePath(dir)}-wal`].filter((f) => existsSync(f));
    const raw = Buffer.concat(files.map((f) => readFileSync(f)));
    // The metadata is in clear (so this really is the file holding the row) ...
    expect(raw.includes(Buffer.from('PLAIN-EMP-77'))).toBe(true);
    // ... the template is not, not even a 16-byte piece of it.
    for (let off = 0; off + 16 <= secret.length; off += 16) expect(raw.includes(secret.subarray(off, off + 16))).toBe(false);
  });

  it('refuses to open without a key, with a clear error', async () => {
    const err = await errorOf(TemplateCache.open(db, { key: null }));
    expect(err.code).toBe('STORE_TEMPLATE_KEY_MISSING');
    expect(err.hint).toMatch(/provision|secrets/);
    expect((await errorOf(TemplateCache.open(db, { key: randomBytes(16) }))).code).toBe('STORE_TEMPLATE_KEY_INVALID');
  });

  it('refuses a wrong key at open, even when the cache is empty', async () => {
    await TemplateCache.open(db, { key });
    expect((await errorOf(reopen(randomBytes(32)))).code).toBe('STORE_TEMPLATE_KEY_WRONG');
    const cache = await reopen(key);
    await cache.addTemplate(finger('E1', randomBytes(50)));
    const err = await errorOf(reopen(randomBytes(32)));
    expect(err.code).toBe('STORE_TEMPLATE_KEY_WRONG');
    expect(err.hint).toMatch(/templateKey/);
    expect(await verifyTemplateKey(dir, randomBytes(32))).toMatchObject({ ok: false });
    await db.close();
    expect(await verifyTemplateKey(dir, key)).toEqual({ ok: true, checked: 1 });
    db = await openAgentDatabase(dir);
  });

  it('deleting a user deletes their templates and says so', async () => {
    const cache = await TemplateCache.open(db, { key });
    await cache.addTemplates([
      finger('E1', randomBytes(40), { id: 'a' }),
      finger('E1', randomBytes(40), { id: 'b', position: 'left-thumb' }),
      finger('E2', randomBytes(40), { id: 'c' }),
    ]);
    const removed: string[] = [];
    cache.on('removed', (r) => removed.push(r.id));
    expect(await cache.deleteUser('E1')).toBe(2);
    expect(removed.sort()).toEqual(['a', 'b']);
    expect(await cache.getTemplate('a')).toBeNull();
    expect(await cache.getUser('E1')).toBeNull();
    expect(await cache.countsByModality()).toEqual({ finger: 1, iris: 0, embedding: 0, badge: 0 });
    const rows = await db.all('SELECT id FROM templates WHERE employee_code = ?', ['E1']);
    expect(rows).toEqual([]);
  });

  it('detects a tampered blob and a blob moved to another row', async () => {
    const cache = await TemplateCache.open(db, { key });
    await cache.addTemplates([
      finger('E1', randomBytes(60), { id: 'x' }),
      finger('E2', randomBytes(60), { id: 'y' }),
      finger('E3', randomBytes(60), { id: 'z' }),
    ]);
    expect((await cache.integrityCheck()).ok).toBe(true);
    await db.transaction((d) =>
      d
        .run("UPDATE templates SET blob = CAST(substr(blob, 1, 5) || X'00' || substr(blob, 7) AS BLOB) WHERE id = 'x'")
        .then(() => undefined),
    );
    // y gets z's blob and nonce: right key, wrong row.
    await db.transaction((d) =>
      d.run("UPDATE templates SET (nonce, blob) = (SELECT nonce, blob FROM templates WHERE id = 'z') WHERE id = 'y'").then(() => undefined),
    );
    const report = await cache.integrityCheck();
    expect(report.ok).toBe(false);
    expect(report.sqlite).toEqual(['ok']);
    expect(report.templates).toBe(3);
    expect(report.users).toBe(3);
    expect(report.undecryptable.map((u) => u.id).sort()).toEqual(['x', 'y']);
    expect((await errorOf(cache.getTemplate('y'))).code).toBe('STORE_TEMPLATE_CORRUPT');
    expect((await cache.verifyKey()).ok).toBe(false);
  });

  it('streams every template of a modality page by page and emits changes', async () => {
    const cache = await TemplateCache.open(db, { key });
    const added: string[] = [];
    cache.on('added', (t) => added.push(t.id));
    const batch = Array.from({ length: 1100 }, (_, i) => finger(`E${i % 300}`, Uint8Array.of(i & 0xff, i >> 8), { id: `f${i}` }));
    await cache.addTemplates(batch);
    await cache.addTemplate({
      employeeCode: 'E1',
      modality: 'iris',
      position: 'right',
      format: 'iris-code-v1',
      data: Uint8Array.of(1),
      id: 'i1',
    });
    expect(added).toHaveLength(1101);
    const seen: number[] = [];
    for await (const t of cache.listTemplates({ modality: 'finger' })) seen.push(t.data[0]! | (t.data[1]! << 8));
    expect(seen).toEqual(Array.from({ length: 1100 }, (_, i) => i));
    const iris = [];
    for await (const t of cache.listTemplates({ modality: 'iris' })) iris.push(t.id);
    expect(iris).toEqual(['i1']);
    expect(await cache.removeTemplate('i1')).toBe(true);
    expect(await cache.removeTemplate('i1')).toBe(false);
  });

  it('refuses a template whose format does not fit its modality, and loses nothing', async () => {
    const cache = await TemplateCache.open(db, { key });
    const err = await errorOf(
      cache.addTemplates([
        finger('E1', Uint8Array.of(1), { id: 'ok' }),
        { employeeCode: 'E1', modality: 'iris', position: 'left', format: 'iso19794-2', data: Uint8Array.of(1) },
      ]),
    );
    expect(err.code).toBe('STORE_TEMPLATE_INVALID');
    expect(await cache.countsByModality()).toEqual({ finger: 0, iris: 0, embedding: 0, badge: 0 });
    const eye = await errorOf(
      cache.addTemplate({ employeeCode: 'E1', modality: 'iris', position: 'right-index', format: 'iris-code-v1', data: Uint8Array.of(1) }),
    );
    expect(eye.code).toBe('STORE_TEMPLATE_INVALID');
    expect(eye.message).toMatch(/left, right or unknown/);
  });

  it('logs every change of a template, so an index snapshot can catch up; the log is pruned on request', async () => {
    const cache = await TemplateCache.open(db, { key });
    const start = await cache.changeState();
    expect(start.instance).toMatch(/^[0-9a-f]{32}$/);
    await cache.addTemplates([
      finger('A', randomBytes(40), { id: 'a1' }),
      finger('A', randomBytes(40), { id: 'a2' }),
      finger('B', randomBytes(40), { id: 'b1' }),
    ]);
    await cache.addTemplate(finger('A', randomBytes(40), { id: 'a1' })); // replaced
    await cache.removeTemplate('b1');
    await cache.deleteUser('A'); // a2 and a1 go with their user (foreign key)
    await cache.addTemplate(finger('C', randomBytes(40), { id: 'c1' }));
    const { through, changes } = await cache.changesSince(start.generation);
    expect(through).toBe((await cache.changeState()).generation);
    // One entry per template, its latest change; puts come decrypted.
    expect(changes.map((c) => (c.op === 'put' ? `put ${c.template.id}` : `del ${c.id}`)).sort()).toEqual([
      'del a1',
      'del a2',
      'del b1',
      'put c1',
    ]);
    const put = changes.find((c) => c.op === 'put');
    expect(put?.op === 'put' && put.template.employeeCode).toBe('C');
    expect((await cache.changesSince(through)).changes).toEqual([]);
    await cache.pruneChanges(through);
    const after = await cache.changeState();
    expect(after).toEqual({ instance: start.instance, generation: through, prunedThrough: through });
    // The instance stays with the database; the change numbers keep counting after a prune.
    const again = await reopen();
    await again.addTemplate(finger('D', randomBytes(40), { id: 'd1' }));
    expect(await again.changeState()).toMatchObject({ instance: start.instance, generation: through + 1, prunedThrough: through });
  });

  it('refuses codes outside the shared rule and stores them in NFC', async () => {
    const cache = await TemplateCache.open(db, { key });
    for (const code of ['\ud800', '..', 'E\u202e1', 'x'.repeat(65)])
      expect((await errorOf(cache.addTemplate(finger(code, Uint8Array.of(1))))).code).toBe('STORE_TEMPLATE_INVALID');
    const stored = await cache.addTemplate(finger('Jose\u0301', Uint8Array.of(1)));
    expect(stored.employeeCode).toBe('Jos\u00e9');
    expect((await cache.listUsers()).map((u) => u.employeeCode)).toEqual(['Jos\u00e9']);
  });

  it('keeps a version per person that only grows, and outlives a deletion (migration 2)', async () => {
    let cache = await TemplateCache.open(db, { key });
    const removed: string[] = [];
    cache.on('removed', (r) => removed.push(r.id));
    expect(await cache.personVersion('E1')).toBeNull();
    const v = (version: number, digest: string | null = `d${version}`) => ({ employeeCode: 'E1', version, digest, origin: 'gate-1' });
    expect(
      await cache.replacePerson(v(100), [finger('E1', Uint8Array.of(1), { id: 'a' }), finger('E1', Uint8Array.of(2), { id: 'b' })]),
    ).toBe(true);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 100, deleted: false, digest: 'd100', origin: 'gate-1' });
    // Not above: nothing changes, in one transaction.
    expect(await cache.replacePerson(v(100, 'other'), [finger('E1', Uint8Array.of(9), { id: 'z' })])).toBe(false);
    expect(await cache.replacePerson(v(50), [finger('E1', Uint8Array.of(9), { id: 'z' })])).toBe(false);
    expect((await cache.listTemplateMeta({ employeeCode: 'E1' })).map((t) => t.id)).toEqual(['a', 'b']);
    // A newer record replaces all of the person's templates.
    expect(await cache.replacePerson(v(200), [finger('E1', Uint8Array.of(3), { id: 'c' })])).toBe(true);
    expect((await cache.listTemplateMeta({ employeeCode: 'E1' })).map((t) => [t.id, t.version])).toEqual([['c', 200]]);
    expect(removed.sort()).toEqual(['a', 'b']);
    // A tombstone deletes and stays; an older record cannot bring the person back, after a reopen too.
    expect(await cache.deletePerson(v(150))).toBeNull();
    expect(await cache.deletePerson(v(300))).toBe(1);
    expect(await cache.getUser('E1')).toBeNull();
    cache = await reopen();
    expect(await cache.personVersion('E1')).toMatchObject({ version: 300, deleted: true });
    expect(await cache.replacePerson(v(250), [finger('E1', Uint8Array.of(4), { id: 'd' })])).toBe(false);
    expect(await cache.notePersonVersion(v(299))).toBe(false);
    expect(await cache.countsByModality()).toEqual({ finger: 0, iris: 0, embedding: 0, badge: 0 });
    expect(await cache.replacePerson(v(301), [finger('E1', Uint8Array.of(4), { id: 'd' })])).toBe(true);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 301, deleted: false });
    expect((await errorOf(cache.notePersonVersion(v(-1)))).code).toBe('STORE_TEMPLATE_INVALID');
  });

  it('fills person versions from the templates of a cache made before them', async () => {
    // A cache at migration 1 with a synced person (version 1234) and a local one (version 0).
    await db.migrate(
      'templates',
      (await import('../../../src/store/template-schema.js')).TEMPLATE_MIGRATIONS.filter((m) => m.version === 1),
    );
    let cache = await TemplateCache.open(db, { key });
    expect(await cache.personVersion('E1')).toBeNull(); // opening migrated it: nobody yet
    await db.exec(
      "DELETE FROM person_versions; DELETE FROM schema_migrations WHERE component = 'templates' AND version >= 2; DROP TABLE person_versions",
    );
    await cache.addTemplate(finger('E1', Uint8Array.of(1), { version: 1234 }));
    await cache.addTemplate(finger('E2', Uint8Array.of(2)));
    cache = await reopen();
    expect(await cache.personVersion('E1')).toMatchObject({ version: 1234, deleted: false, digest: null });
    expect(await cache.personVersion('E2')).toMatchObject({ version: 0, deleted: false });
    // An unknown digest at the same version is taken as the same record (no refusal on upgrade).
    expect(await cache.notePersonVersion({ employeeCode: 'E1', version: 1234, digest: 'abc', origin: null })).toBe(true);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 1234, digest: 'abc' });
  });

  it('takes badges after migration 3, which keeps every template of a cache made before it (rows, ids, blobs)', async () => {
    const { TEMPLATE_MIGRATIONS } = await import('../../../src/store/template-schema.js');
    await db.migrate(
      'templates',
      TEMPLATE_MIGRATIONS.filter((m) => m.version <= 2),
    );
    let cache = await TemplateCache.open(db, { key });
    // Opening migrated to the end: go back to a cache of migration 2 holding a template.
    await db.exec(`DELETE FROM schema_migrations WHERE component = 'templates' AND version >= 3;
      CREATE TABLE t2 AS SELECT * FROM templates; DROP TABLE templates;
      CREATE TABLE templates (id TEXT PRIMARY KEY, employee_code TEXT NOT NULL REFERENCES template_users (employee_code) ON DELETE CASCADE,
        modality TEXT NOT NULL CHECK (modality IN ('finger', 'iris', 'embedding')), position TEXT NOT NULL, format TEXT NOT NULL, sensor_model TEXT,
        quality INTEGER, created_at TEXT NOT NULL, source_terminal TEXT, version INTEGER NOT NULL DEFAULT 0, nonce BLOB NOT NULL, blob BLOB NOT NULL);
      DROP TABLE t2;`);
    const kept = await cache.addTemplate(finger('E1', Uint8Array.of(9, 8, 7), { version: 55 }));
    await expect(db.run("UPDATE templates SET modality = 'badge'")).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT' });
    cache = await reopen();
    expect(await cache.getTemplate(kept.id)).toMatchObject({
      employeeCode: 'E1',
      modality: 'finger',
      version: 55,
      data: Uint8Array.of(9, 8, 7),
    });
    const badge = await cache.addTemplate({
      employeeCode: 'E1',
      modality: 'badge',
      position: 'badge',
      format: 'badge-hmac-sha256',
      data: new Uint8Array(32).fill(3),
    });
    expect(await cache.countsByModality()).toEqual({ finger: 1, iris: 0, embedding: 0, badge: 1 });
    expect((await cache.getTemplate(badge.id))?.data).toEqual(new Uint8Array(32).fill(3));
    // The rebuilt table logs its changes again (migration 4 put its triggers back).
    expect((await cache.changesSince(0)).changes.some((c) => c.op === 'put' && c.template.id === badge.id)).toBe(true);
    // A badge is a 32-byte keyed hash, never anything else (a card number would not be).
    expect(
      await errorOf(
        cache.addTemplate({
          employeeCode: 'E1',
          modality: 'badge',
          position: 'badge',
          format: 'badge-hmac-sha256',
          data: Buffer.from('0008844356'),
        }),
      ),
    ).toMatchObject({ code: 'STORE_TEMPLATE_INVALID' });
    expect(
      await errorOf(
        cache.addTemplate({
          employeeCode: 'E1',
          modality: 'finger',
          position: 'badge',
          format: 'badge-hmac-sha256',
          data: new Uint8Array(32),
        }),
      ),
    ).toMatchObject({ code: 'STORE_TEMPLATE_INVALID' });
    expect(await db.integrityCheck()).toEqual(['ok']);
  });
});
