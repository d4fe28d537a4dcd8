// A badge travels in its person's site record: enrolled on terminal A (its keyed hash, under the
// key both derive from the site key), built into A's record with the person's other templates,
// parsed and applied on terminal B (another template key), and B's identifier then knows the
// card. A tombstone takes the badge away with the rest of the person.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { TemplateCache } from '../../../src/store/template-cache.js';
import { digestOf, parseRecord, tombstone } from '../../../src/site-sync/site-sync.js';
import { siteRecordOf, siteStore } from '../../../src/site-sync/template-store.js';
import { BADGE_FORMAT, BadgeMatcher, CredentialHasher } from '../../../src/terminal/credentials.js';
import { Identifier } from '../../../src/terminal/identifier.js';

const dirs: string[] = [];
const dbs: SqliteDatabase[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function terminal(siteKey: Buffer) {
  const dir = mkdtempSync(join(tmpdir(), 'badge-site-'));
  dirs.push(dir);
  const db = await openAgentDatabase(dir);
  dbs.push(db);
  const templateKey = randomBytes(32);
  const cache = await TemplateCache.open(db, { key: templateKey });
  const hasher = new CredentialHasher({ siteKey, templateKey });
  return { cache, hasher };
}

describe('badges in site records', () => {
  it('reach every terminal of the site with the person, and leave with a tombstone', async () => {
    const siteKey = randomBytes(32);
    const a = await terminal(siteKey);
    const b = await terminal(siteKey);
    await a.cache.addTemplates([
      { employeeCode: 'E7', modality: 'finger', position: 'right-index', format: 'iso19794-2', data: Uint8Array.of(1, 2, 3) },
      { employeeCode: 'E7', modality: 'badge', position: 'badge', format: BADGE_FORMAT, data: a.hasher.hash('32:8844356') },
    ]);
    const record = (await siteRecordOf(a.cache, 'E7', 'gate-a', 1_000_000))!;
    expect(record.templates.map((t) => [t.modality, t.format])).toEqual(
      expect.arrayContaining([
        ['badge', BADGE_FORMAT],
        ['finger', 'iso19794-2'],
      ]),
    );
    const plaintext = Buffer.from(JSON.stringify(record));
    expect(plaintext.includes(Buffer.from('8844356'))).toBe(false);
    // What terminal B does with the record it receives (after opening the sealed envelope).
    const parsed = parseRecord(plaintext, 'E7');
    expect(await siteStore(b.cache).apply(parsed, digestOf(plaintext))).toBe(true);
    const id = await Identifier.build(b.cache, {
      biometrics: { fingerThreshold: 40, irisThreshold: 0.32, irisShiftRange: 8 },
      matchers: [new BadgeMatcher(b.hasher)],
    });
    try {
      expect(await id.identify({ modality: 'badge', template: { credential: '32:8844356' } })).toMatchObject({
        employeeCode: 'E7',
        decision: 'accept',
      });
      const gone = tombstone('E7', { version: parsed.version, deleted: false, digest: null }, 'gate-a', 2_000_000);
      expect(await siteStore(b.cache).remove(gone, digestOf(Buffer.from(JSON.stringify(gone))))).toBe(2);
      expect(await id.identify({ modality: 'badge', template: { credential: '32:8844356' } })).toMatchObject({
        employeeCode: null,
        decision: 'reject',
      });
    } finally {
      await id.close();
    }
  });

  it('mean nothing on a terminal of another site', async () => {
    const a = await terminal(randomBytes(32));
    const other = await terminal(randomBytes(32));
    await a.cache.addTemplate({
      employeeCode: 'E8',
      modality: 'badge',
      position: 'badge',
      format: BADGE_FORMAT,
      data: a.hasher.hash('24:5'),
    });
    const record = (await siteRecordOf(a.cache, 'E8', 'gate-a'))!;
    const plaintext = Buffer.from(JSON.stringify(record));
    await siteStore(other.cache).apply(parseRecord(plaintext, 'E8'), digestOf(plaintext));
    const id = await Identifier.build(other.cache, {
      biometrics: { fingerThreshold: 40, irisThreshold: 0.32, irisShiftRange: 8 },
      matchers: [new BadgeMatcher(other.hasher)],
    });
    try {
      expect(await id.identify({ modality: 'badge', template: { credential: '24:5' } })).toMatchObject({ decision: 'reject' });
    } finally {
      await id.close();
    }
  });
});
