import { describe, expect, it } from 'vitest';
import { hasPath, isPlainObject, mergeConfig, setPath } from '../../../src/config/layers.js';

describe('layers: plain objects before validation', () => {
  it('merges mappings deeply; lists and values replace; undefined leaves what is there', () => {
    expect(
      mergeConfig(
        { api: { url: 'a', pathForm: 'api' }, upstream: ['api', 'mqtt'] },
        { api: { url: 'b' }, upstream: ['mqtt'], dataDir: undefined },
      ),
    ).toEqual({ api: { url: 'b', pathForm: 'api' }, upstream: ['mqtt'] });
    expect(mergeConfig({ mqtt: { url: 'm' } }, { mqtt: null })).toEqual({ mqtt: null });
  });

  it('sets a key at a path, making the levels above it (and replacing a value that is in the way)', () => {
    const o: Record<string, unknown> = { terminal: { site: 's' }, api: 'x' };
    setPath(o, ['terminal', 'id'], 'gate-1');
    setPath(o, ['api', 'url'], 'http://h');
    setPath(o, ['dataDir'], '/d');
    expect(o).toEqual({ terminal: { site: 's', id: 'gate-1' }, api: { url: 'http://h' }, dataDir: '/d' });
  });

  it('tells whether a layer holds a key, null and list items included', () => {
    const o = { api: { url: null }, scanners: [{ path: 'sim' }] };
    expect(hasPath(o, 'api.url')).toBe(true);
    expect(hasPath(o, 'scanners.0.path')).toBe(true);
    expect(hasPath(o, 'api.clientId')).toBe(false);
    expect(hasPath(o, 'api.url.deeper')).toBe(false);
  });

  it('takes mappings only as plain objects', () => {
    expect([{}, [], null, Buffer.from('x'), 'x'].map(isPlainObject)).toEqual([true, false, false, false, false]);
  });
});
