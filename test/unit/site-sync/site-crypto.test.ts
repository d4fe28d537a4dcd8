import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSiteRecord, sealSiteRecord } from '../../../src/site-sync/site-crypto.js';

describe('site records', () => {
  it('seals records so they open only under the same key and topic', () => {
    const key = randomBytes(32);
    const sealed = sealSiteRecord(key, 's1', 'E1', Buffer.from('secret template'));
    expect(sealed.toString()).not.toContain('secret template');
    expect(openSiteRecord(key, 's1', 'E1', sealed).toString()).toBe('secret template');
    expect(() => openSiteRecord(key, 's1', 'E2', sealed)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_TAMPERED' }));
    expect(() => openSiteRecord(randomBytes(32), 's1', 'E1', sealed)).toThrow(expect.objectContaining({ code: 'OPS_SYNC_WRONG_KEY' }));
    expect(() => openSiteRecord(key, 's1', 'E1', Buffer.from('nope'))).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
  });
});
