/**
 * The template cache (src/store/template-cache/changes.ts), through the `TemplateCache` facade: the
 * change log an index snapshot catches up from, and its pruning.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TemplateCache } from '../../../../src/store/template-cache.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { finger, key, reopen } from './template-cache.fixture.js';

const store = agentDatabasePerTest('template-cache-');

describe('TemplateCache: changes', () => {
  it('logs every change of a template, so an index snapshot can catch up; the log is pruned on request', async () => {
    const cache = await TemplateCache.open(store.db, { key });
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
    const again = await reopen(store);
    await again.addTemplate(finger('D', randomBytes(40), { id: 'd1' }));
    expect(await again.changeState()).toMatchObject({ instance: start.instance, generation: through + 1, prunedThrough: through });
  });
});
