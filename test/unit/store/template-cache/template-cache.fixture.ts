/**
 * What the template cache's unit tests share besides the database (../agent-db.fixture.ts): the key, a
 * finger template to store, a reopen of the cache, and the error a promise rejects with.
 */
import { randomBytes } from 'node:crypto';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import { type NewTemplate, TemplateCache } from '../../../../src/store/template-cache.js';
import type { TestDatabase } from '../agent-db.fixture.js';

/** The template key of this test file's caches. */
export const key = randomBytes(32);

/** A right-index ISO/IEC 19794-2 template of `employeeCode` with `data`, from an R503 on gate-1. */
export function finger(employeeCode: string, data: Uint8Array, extra: Partial<NewTemplate> = {}): NewTemplate {
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

/** Closes the test's database, opens it again (the new one replaces it in `store`) and the cache on it with `k`. */
export async function reopen(store: TestDatabase, k: Buffer | null = key): Promise<TemplateCache> {
  await store.db.close();
  store.db = await openAgentDatabase(store.dir);
  return TemplateCache.open(store.db, { key: k });
}

/** What `p` rejects with; throws when it resolves. */
export async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}
