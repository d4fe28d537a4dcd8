import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mergeVersions, openSiteIndex, sealSiteIndex } from '../../../src/site-sync/site-index.js';
import { sealSiteRecord } from '../../../src/site-sync/site-crypto.js';

const key = randomBytes(32);

describe('the site index', () => {
  it('opens what was sealed for its site only, and never passes for a record', () => {
    const sealed = sealSiteIndex(key, 'plant-a', new Map([['E1001', 5]]));
    expect([...openSiteIndex(key, 'plant-a', sealed)]).toEqual([['E1001', 5]]);
    expect(() => openSiteIndex(key, 'plant-b', sealed)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_TAMPERED' }));
    expect(() => openSiteIndex(randomBytes(32), 'plant-a', sealed)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_WRONG_KEY' }));
    // A record's envelope copied onto the index topic does not open as the index.
    const record = sealSiteRecord(key, 'plant-a', 'E1001', Buffer.from('{"v":1,"versions":{}}'));
    expect(() => openSiteIndex(key, 'plant-a', record)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_TAMPERED' }));
    const bad = sealSiteIndex(key, 'plant-a', new Map([['E1', -1]]));
    expect(() => openSiteIndex(key, 'plant-a', bad)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
  });

  it('merges by the larger version and says whether anything was lacking', () => {
    const into = new Map([
      ['E1', 3],
      ['E2', 9],
    ]);
    expect(mergeVersions(into, new Map([['E1', 2]]))).toBe(false);
    expect(
      mergeVersions(
        into,
        new Map([
          ['E1', 4],
          ['E3', 1],
        ]),
      ),
    ).toBe(true);
    expect([...into].sort()).toEqual([
      ['E1', 4],
      ['E2', 9],
      ['E3', 1],
    ]);
  });
});
