/**
 * The template cache (src/store/template-cache/envelope.ts), through the `TemplateCache` facade:
 * the bytes sealed at rest, a missing or wrong key refused at open, tampered or moved blobs found,
 * the key verified for doctor.
 */
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { agentDatabasePath, openAgentDatabase } from '../../../../src/store/agent-db.js';
import { TemplateCache, verifyTemplateKey } from '../../../../src/store/template-cache.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { errorOf, finger, key, reopen } from './template-cache.fixture.js';

const store = agentDatabasePerTest('template-cache-');

describe('TemplateCache: envelope', () => {
  it('never writes the template bytes in clear to the database files', async () => {
    const cache = await TemplateCache.open(store.db, { key });
    const secret = Buffer.concat([Buffer.from('FMR\0 20\0'), randomBytes(200)]);
    await cache.addTemplate(finger('PLAIN-EMP-77', secret));
    await store.db.close();
    const files = [agentDatabasePath(store.dir), `${agentDatabasePath(store.dir)}-wal`].filter((f) => existsSync(f));
    const raw = Buffer.concat(files.map((f) => readFileSync(f)));
    // The metadata is in clear (so this really is the file holding the row) ...
    expect(raw.includes(Buffer.from('PLAIN-EMP-77'))).toBe(true);
    // ... the template is not, not even a 16-byte piece of it.
    for (let off = 0; off + 16 <= secret.length; off += 16) expect(raw.includes(secret.subarray(off, off + 16))).toBe(false);
  });

  it('refuses to open without a key, with a clear error', async () => {
    const err = await errorOf(TemplateCache.open(store.db, { key: null }));
    expect(err.code).toBe('STORE_TEMPLATE_KEY_MISSING');
    expect(err.hint).toMatch(/provision|secrets/);
    expect((await errorOf(TemplateCache.open(store.db, { key: randomBytes(16) }))).code).toBe('STORE_TEMPLATE_KEY_INVALID');
  });

  it('refuses a wrong key at open, even when the cache is empty', async () => {
    await TemplateCache.open(store.db, { key });
    expect((await errorOf(reopen(store, randomBytes(32)))).code).toBe('STORE_TEMPLATE_KEY_WRONG');
    const cache = await reopen(store, key);
    await cache.addTemplate(finger('E1', randomBytes(50)));
    const err = await errorOf(reopen(store, randomBytes(32)));
    expect(err.code).toBe('STORE_TEMPLATE_KEY_WRONG');
    expect(err.hint).toMatch(/templateKey/);
    expect(await verifyTemplateKey(store.dir, randomBytes(32))).toMatchObject({ ok: false });
    await store.db.close();
    expect(await verifyTemplateKey(store.dir, key)).toEqual({ ok: true, checked: 1 });
    store.db = await openAgentDatabase(store.dir);
  });

  it('detects a tampered blob and a blob moved to another row', async () => {
    const cache = await TemplateCache.open(store.db, { key });
    await cache.addTemplates([
      finger('E1', randomBytes(60), { id: 'x' }),
      finger('E2', randomBytes(60), { id: 'y' }),
      finger('E3', randomBytes(60), { id: 'z' }),
    ]);
    expect((await cache.integrityCheck()).ok).toBe(true);
    await store.db.transaction((d) =>
      d
        .run("UPDATE templates SET blob = CAST(substr(blob, 1, 5) || X'00' || substr(blob, 7) AS BLOB) WHERE id = 'x'")
        .then(() => undefined),
    );
    // y gets z's blob and nonce: right key, wrong row.
    await store.db.transaction((d) =>
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
});
