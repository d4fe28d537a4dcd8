// Badge credentials: only a keyed hash is kept; the key comes from the site key where there is
// one (the same badge hashes alike on every terminal of the site) and from the template key
// otherwise; the identifier finds a stored badge through the real encrypted template cache and
// forgets it when it is removed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { TemplateCache } from '../../../src/store/template-cache.js';
import { BADGE_FORMAT, BadgeMatcher, CredentialHasher } from '../../../src/terminal/credentials.js';
import { Identifier } from '../../../src/terminal/identifier.js';

const siteKey = randomBytes(32);
const templateKey = randomBytes(32);

describe('CredentialHasher', () => {
  it('keeps a 32-byte keyed hash, the same on every terminal of a site, never the number', () => {
    const a = new CredentialHasher({ siteKey, templateKey });
    const b = new CredentialHasher({ siteKey, templateKey: randomBytes(32) });
    const h = a.hash('32:8844356');
    expect(h.length).toBe(32);
    expect(h.toString('latin1')).not.toContain('8844356');
    expect(b.hash('32:8844356')).toEqual(h);
    expect(a.hash('32:8844357')).not.toEqual(h);
    expect(a.hash('24:8844356')).not.toEqual(h);
    expect(a.siteWide).toBe(true);
  });

  it('uses the template key on a terminal without a site key, and still finds those badges once a site key is set', () => {
    const alone = new CredentialHasher({ siteKey: null, templateKey });
    const later = new CredentialHasher({ siteKey, templateKey });
    expect(alone.siteWide).toBe(false);
    expect(alone.hash('32:1')).not.toEqual(later.hash('32:1'));
    expect(later.candidates('32:1')).toEqual([later.hash('32:1'), alone.hash('32:1')]);
    expect(new CredentialHasher({ siteKey: null, templateKey: randomBytes(32) }).hash('32:1')).not.toEqual(alone.hash('32:1'));
  });

  it('takes only credentials a reader makes', () => {
    const h = new CredentialHasher({ siteKey: null, templateKey });
    for (const bad of ['', '8844356', '16:1', '32:', '32:12345678901', '32:1 '])
      expect(() => h.hash(bad)).toThrow(expect.objectContaining({ code: 'POLICY_BAD_PUNCH' }));
  });
});

describe('badge identification through the template cache', () => {
  let dir: string;
  let db: SqliteDatabase;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'badges-'));
    db = await openAgentDatabase(dir);
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds an enrolled badge (score 1), follows removals, and keeps no card number in the database file', async () => {
    const cache = await TemplateCache.open(db, { key: templateKey });
    const hasher = new CredentialHasher({ siteKey, templateKey });
    const legacy = new CredentialHasher({ siteKey: null, templateKey });
    await cache.addTemplate({
      employeeCode: 'E1',
      modality: 'badge',
      position: 'badge',
      format: BADGE_FORMAT,
      data: hasher.hash('32:8844356'),
    });
    const old = await cache.addTemplate({
      employeeCode: 'E2',
      modality: 'badge',
      position: 'badge',
      format: BADGE_FORMAT,
      data: legacy.hash('24:77'),
    });
    const id = await Identifier.build(cache, {
      biometrics: { fingerThreshold: 40, irisThreshold: 0.32, irisShiftRange: 8 },
      matchers: [new BadgeMatcher(hasher)],
    });
    try {
      expect(id.size('badge')).toBe(2);
      expect(await id.identify({ modality: 'badge', template: { credential: '32:8844356' } })).toMatchObject({
        employeeCode: 'E1',
        decision: 'accept',
        score: 1,
      });
      expect(await id.identify({ modality: 'badge', template: { credential: '24:77' } })).toMatchObject({
        employeeCode: 'E2',
        decision: 'accept',
      });
      expect(await id.identify({ modality: 'badge', template: { credential: '32:1' } })).toMatchObject({
        employeeCode: null,
        decision: 'reject',
        score: null,
      });
      await cache.removeTemplate(old.id);
      expect(await id.identify({ modality: 'badge', template: { credential: '24:77' } })).toMatchObject({ decision: 'reject' });
      await expect(id.identify({ modality: 'badge', template: new Uint8Array(32) })).rejects.toMatchObject({
        code: 'BIOMETRICS_TEMPLATE_MALFORMED',
      });
    } finally {
      await id.close();
    }
    await db.close();
    db = await openAgentDatabase(dir);
    for (const f of ['agent.db', 'agent.db-wal']) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, f));
      } catch {
        continue;
      }
      expect(bytes.includes(Buffer.from('8844356'))).toBe(false);
      expect(bytes.includes(hasher.hash('32:8844356'))).toBe(false); // the hash itself is sealed too
    }
  });
});
