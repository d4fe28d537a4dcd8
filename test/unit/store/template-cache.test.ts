/**
 * The template cache (src/store/template-cache.ts): users, templates and person versions written,
 * replaced and deleted, with their events; what it refuses. The reads, the key and the change log
 * have their own tests in template-cache/.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TemplateCache } from '../../../src/store/template-cache.js';
import { agentDatabasePerTest } from './agent-db.fixture.js';
import { errorOf, finger, key, reopen } from './template-cache/template-cache.fixture.js';

const store = agentDatabasePerTest('template-cache-');

describe('TemplateCache', () => {
  it('deleting a user deletes their templates and says so', async () => {
    const cache = await TemplateCache.open(store.db, { key });
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
    const rows = await store.db.all('SELECT id FROM templates WHERE employee_code = ?', ['E1']);
    expect(rows).toEqual([]);
  });

  it('refuses a template whose format does not fit its modality, and loses nothing', async () => {
    const cache = await TemplateCache.open(store.db, { key });
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

  it('refuses codes outside the shared rule and stores them in NFC', async () => {
    const cache = await TemplateCache.open(store.db, { key });
    for (const code of ['\ud800', '..', 'E\u202e1', 'x'.repeat(65), 'Ｅ１００１'])
      expect((await errorOf(cache.addTemplate(finger(code, Uint8Array.of(1))))).code).toBe('STORE_TEMPLATE_INVALID');
    const stored = await cache.addTemplate(finger('Jose\u0301', Uint8Array.of(1)));
    expect(stored.employeeCode).toBe('Jos\u00e9');
    expect((await cache.listUsers()).map((u) => u.employeeCode)).toEqual(['Jos\u00e9']);
  });

  it('keeps a version per person that only grows, and outlives a deletion (migration 2)', async () => {
    let cache = await TemplateCache.open(store.db, { key });
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
    cache = await reopen(store);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 300, deleted: true });
    expect(await cache.replacePerson(v(250), [finger('E1', Uint8Array.of(4), { id: 'd' })])).toBe(false);
    expect(await cache.notePersonVersion(v(299))).toBe(false);
    expect(await cache.countsByModality()).toEqual({ finger: 0, iris: 0, embedding: 0, badge: 0 });
    expect(await cache.replacePerson(v(301), [finger('E1', Uint8Array.of(4), { id: 'd' })])).toBe(true);
    expect(await cache.personVersion('E1')).toMatchObject({ version: 301, deleted: false });
    expect((await errorOf(cache.notePersonVersion(v(-1)))).code).toBe('STORE_TEMPLATE_INVALID');
  });
});
