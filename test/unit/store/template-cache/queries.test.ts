/**
 * The template cache (src/store/template-cache/queries.ts), through the `TemplateCache` facade:
 * templates and users read back (metadata, decrypted bytes, counts, versions) and every template of
 * a modality streamed page by page.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TemplateCache, type StoredTemplate } from '../../../../src/store/template-cache.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { finger, key } from './template-cache.fixture.js';

const store = agentDatabasePerTest('template-cache-');

describe('TemplateCache: queries', () => {
  it('stores, reads back and counts templates with their metadata', async () => {
    const cache = await TemplateCache.open(store.db, { key });
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

  it('streams every template of a modality page by page and emits changes', async () => {
    const cache = await TemplateCache.open(store.db, { key });
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
});
