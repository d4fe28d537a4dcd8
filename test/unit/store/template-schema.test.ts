/**
 * The template cache's migrations (src/store/template-schema.ts), through the `TemplateCache`
 * facade: a cache made before a migration keeps its templates and gets what the migration adds.
 */
import { describe, expect, it } from 'vitest';
import { TemplateCache } from '../../../src/store/template-cache.js';
import { agentDatabasePerTest } from './agent-db.fixture.js';
import { errorOf, finger, key, reopen } from './template-cache/template-cache.fixture.js';

const store = agentDatabasePerTest('template-cache-');

describe('TemplateCache: migrations', () => {
  it('fills person versions from the templates of a cache made before them', async () => {
    // A cache at migration 1 with a synced person (version 1234) and a local one (version 0).
    await store.db.migrate(
      'templates',
      (await import('../../../src/store/template-schema.js')).TEMPLATE_MIGRATIONS.filter((m) => m.version === 1),
    );
    let cache = await TemplateCache.open(store.db, { key });
    expect(await cache.personVersion('E1')).toBeNull(); // opening migrated it: nobody yet
    await store.db.exec(
      "DELETE FROM person_versions; DELETE FROM schema_migrations WHERE component = 'templates' AND version >= 2; DROP TABLE person_versions",
    );
    await cache.addTemplate(finger('E1', Uint8Array.of(1), { version: 1234 }));
    await cache.addTemplate(finger('E2', Uint8Array.of(2)));
    cache = await reopen(store);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 1234, deleted: false, digest: null });
    expect(await cache.personVersion('E2')).toMatchObject({ version: 0, deleted: false });
    // An unknown digest at the same version is taken as the same record (no refusal on upgrade).
    expect(await cache.notePersonVersion({ employeeCode: 'E1', version: 1234, digest: 'abc', origin: null })).toBe(true);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 1234, digest: 'abc' });
  });

  it('takes badges after migration 3, which keeps every template of a cache made before it (rows, ids, blobs)', async () => {
    const { TEMPLATE_MIGRATIONS } = await import('../../../src/store/template-schema.js');
    await store.db.migrate(
      'templates',
      TEMPLATE_MIGRATIONS.filter((m) => m.version <= 2),
    );
    let cache = await TemplateCache.open(store.db, { key });
    // Opening migrated to the end: go back to a cache of migration 2 holding a template.
    await store.db.exec(`DELETE FROM schema_migrations WHERE component = 'templates' AND version >= 3;
      CREATE TABLE t2 AS SELECT * FROM templates; DROP TABLE templates;
      CREATE TABLE templates (id TEXT PRIMARY KEY, employee_code TEXT NOT NULL REFERENCES template_users (employee_code) ON DELETE CASCADE,
        modality TEXT NOT NULL CHECK (modality IN ('finger', 'iris', 'embedding')), position TEXT NOT NULL, format TEXT NOT NULL, sensor_model TEXT,
        quality INTEGER, created_at TEXT NOT NULL, source_terminal TEXT, version INTEGER NOT NULL DEFAULT 0, nonce BLOB NOT NULL, blob BLOB NOT NULL);
      DROP TABLE t2;`);
    const kept = await cache.addTemplate(finger('E1', Uint8Array.of(9, 8, 7), { version: 55 }));
    await expect(store.db.run("UPDATE templates SET modality = 'badge'")).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT' });
    cache = await reopen(store);
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
    expect(await store.db.integrityCheck()).toEqual(['ok']);
  });
});
