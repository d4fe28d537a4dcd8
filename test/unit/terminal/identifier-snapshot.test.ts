/**
 * The identification indexes from an encrypted snapshot: a start loads what the last one saved,
 * catches up with the cache's changes since, and never serves a snapshot that does not fit (another
 * database, a log pruned past it, altered bytes, another key): those build from the cache instead.
 *
 * Tests: src/terminal/identifier.ts with src/store/index-snapshot.ts (identifier.test.ts has the
 * identifier without a snapshot).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Identifier, type IdentifierOptions } from '../../../src/terminal/identifier.js';
import { FingerMatcher } from '../../../src/biometrics/matchers/finger-matcher.js';
import { encodeIrisTemplate } from '../../../src/biometrics/iris/iris-code.js';
import { encodeIso19794_2 } from '../../../src/biometrics/finger/iso19794-2.js';
import { impression, impressionTemplate, syntheticFinger } from '../../../src/synthetic/finger.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../../src/synthetic/iris-code.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { TemplateCache } from '../../../src/store/template-cache.js';

const biometrics = { fingerThreshold: 40, irisThreshold: 0.32, irisShiftRange: 8 };
const irisBytes = (eye: number, sample: number) => encodeIrisTemplate(syntheticIrisSample(syntheticIrisEye(eye), sample).code);
const fingerBytes = (finger: number, imp: number) => encodeIso19794_2(impressionTemplate(impression(syntheticFinger(finger), imp)));

let dir: string;
let db: SqliteDatabase;
let cache: TemplateCache;
let key: Buffer;
let snapshotPath: string;
const open: Identifier[] = [];

async function build(options: Partial<IdentifierOptions> = {}): Promise<Identifier> {
  const id = await Identifier.build(cache, {
    biometrics,
    matchers: [new FingerMatcher(40)],
    snapshot: { path: snapshotPath, templateKey: key },
    ...options,
  });
  open.push(id);
  return id;
}

async function close(id: Identifier): Promise<void> {
  await id.close();
  open.splice(open.indexOf(id), 1);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'identifier-snapshot-'));
  snapshotPath = join(dir, 'index-snapshot.bin');
  key = randomBytes(32);
  db = await openAgentDatabase(dir);
  cache = await TemplateCache.open(db, { key });
  const batch = [];
  for (let e = 0; e < 30; e++)
    batch.push({
      id: `iris-${e}`,
      employeeCode: `E${e}`,
      modality: 'iris' as const,
      position: 'left',
      format: 'iris-code-v1' as const,
      data: irisBytes(e, 1),
    });
  for (let f = 0; f < 12; f++)
    batch.push({
      id: `finger-${f}`,
      employeeCode: `E${f}`,
      modality: 'finger' as const,
      position: 'right-index',
      format: 'iso19794-2' as const,
      data: fingerBytes(500 + f, 0),
    });
  await cache.addTemplates(batch);
});
afterEach(async () => {
  for (const id of [...open]) await id.close();
  open.length = 0;
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function who(id: Identifier, modality: 'iris' | 'finger', template: Uint8Array): Promise<string | null> {
  return (await id.identify({ modality, template })).employeeCode;
}

describe('Identifier with an index snapshot', () => {
  it('builds from the cache the first time, then loads the saved snapshot and identifies the same', async () => {
    const first = await build();
    expect(first.buildReport).toMatchObject({ source: 'cache', reason: 'snapshot not used: no snapshot yet' });
    expect(first.snapshotDue).toBe(true);
    const saved = await first.saveSnapshot();
    expect(saved!.bytes).toBeGreaterThan(30 * 512);
    expect(first.snapshotDue).toBe(false);
    expect(statSync(snapshotPath).mode & 0o777).toBe(0o600);
    // Encrypted: no template's bytes (here an iris code's first 64 bytes) in the file.
    const file = readFileSync(snapshotPath);
    expect(file.includes(Buffer.from(irisBytes(7, 1).subarray(12, 76)))).toBe(false);
    await close(first);

    const second = await build();
    expect(second.buildReport).toMatchObject({ source: 'snapshot', reason: null, caughtUp: 0 });
    expect(second.size('iris')).toBe(30);
    expect(second.size('finger')).toBe(12);
    expect(await who(second, 'iris', irisBytes(17, 6))).toBe('E17');
    expect(await who(second, 'finger', fingerBytes(505, 1))).toBe('E5');
    expect(await who(second, 'iris', irisBytes(999, 1))).toBeNull();
  });

  it('catches up with what changed in the cache after the snapshot (another process wrote it)', async () => {
    const first = await build();
    await first.saveSnapshot();
    await close(first);
    // Changes the snapshot does not hold: a new person, a replaced template, a deleted one.
    await cache.addTemplate({
      id: 'iris-new',
      employeeCode: 'NEW',
      modality: 'iris',
      position: 'right',
      format: 'iris-code-v1',
      data: irisBytes(400, 1),
    });
    await cache.addTemplate({
      id: 'iris-3',
      employeeCode: 'E3',
      modality: 'iris',
      position: 'left',
      format: 'iris-code-v1',
      data: irisBytes(401, 1),
    });
    await cache.removeTemplate('finger-2');
    await cache.deleteUser('E9');
    const second = await build();
    expect(second.buildReport).toMatchObject({ source: 'snapshot', caughtUp: 5 }); // iris-new, iris-3, finger-2, iris-9, finger-9
    expect(await who(second, 'iris', irisBytes(400, 3))).toBe('NEW');
    expect(await who(second, 'iris', irisBytes(401, 3))).toBe('E3');
    expect(await who(second, 'iris', irisBytes(3, 3))).toBeNull();
    expect(await who(second, 'finger', fingerBytes(502, 1))).toBeNull();
    expect(await who(second, 'iris', irisBytes(9, 3))).toBeNull();
    expect(second.size('iris')).toBe(30);
    expect(second.size('finger')).toBe(10);
    // Saving again prunes the log: the next start has nothing to catch up.
    await second.saveSnapshot();
    expect((await cache.changeState()).prunedThrough).toBe((await cache.changeState()).generation);
    await close(second);
    expect((await build()).buildReport).toMatchObject({ source: 'snapshot', caughtUp: 0 });
  });

  it('follows the cache live and says when a new snapshot is due', async () => {
    const id = await build();
    await id.saveSnapshot();
    await cache.addTemplate({
      id: 'live',
      employeeCode: 'LIVE',
      modality: 'iris',
      position: 'left',
      format: 'iris-code-v1',
      data: irisBytes(600, 1),
    });
    expect(await who(id, 'iris', irisBytes(600, 2))).toBe('LIVE');
    expect(id.snapshotDue).toBe(false); // one change: not yet
  });

  it('never serves a snapshot that does not fit: altered, another key, another database, a pruned log', async () => {
    const first = await build();
    await first.saveSnapshot();
    await close(first);
    const good = readFileSync(snapshotPath);

    const altered = Buffer.from(good);
    altered[altered.length - 100]! ^= 0x01;
    writeFileSync(snapshotPath, altered, { mode: 0o600 });
    let id = await build();
    expect(id.buildReport.source).toBe('cache');
    expect(id.buildReport.reason).toMatch(/does not authenticate/);
    expect(await who(id, 'iris', irisBytes(4, 2))).toBe('E4');
    await close(id);

    writeFileSync(snapshotPath, good.subarray(0, good.length - 5000), { mode: 0o600 });
    id = await build();
    expect(id.buildReport.reason).toMatch(/truncated/);
    await close(id);

    writeFileSync(snapshotPath, good, { mode: 0o600 });
    const otherKey = randomBytes(32);
    id = await Identifier.build(cache, {
      biometrics,
      matchers: [new FingerMatcher(40)],
      snapshot: { path: snapshotPath, templateKey: otherKey },
    });
    open.push(id);
    expect(id.buildReport.reason).toMatch(/does not authenticate/);
    await close(id);

    // Another database (a cache made anew) never takes this one's snapshot.
    const otherDir = mkdtempSync(join(tmpdir(), 'identifier-snapshot-other-'));
    const otherDb = await openAgentDatabase(otherDir);
    try {
      const otherCache = await TemplateCache.open(otherDb, { key });
      const other = await Identifier.build(otherCache, { biometrics, snapshot: { path: snapshotPath, templateKey: key } });
      expect(other.buildReport.reason).toMatch(/another template database/);
      expect(other.size('iris')).toBe(0);
      await other.close();
    } finally {
      await otherDb.close();
      rmSync(otherDir, { recursive: true, force: true });
    }

    // A log pruned past the snapshot (another snapshot was saved meanwhile): it cannot catch up.
    await cache.addTemplate({
      id: 'later',
      employeeCode: 'LATER',
      modality: 'iris',
      position: 'left',
      format: 'iris-code-v1',
      data: irisBytes(700, 1),
    });
    await cache.pruneChanges((await cache.changeState()).generation);
    id = await build();
    expect(id.buildReport.reason).toMatch(/log keeps/);
    expect(await who(id, 'iris', irisBytes(700, 2))).toBe('LATER');
  });
});
