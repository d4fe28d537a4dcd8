import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Identifier } from '../../../src/terminal/identifier.js';
import { FingerMatcher } from '../../../src/biometrics/matchers/finger-matcher.js';
import { decodeIrisTemplate, encodeIrisTemplate, getBit, IRIS_CODE_BITS, setBit } from '../../../src/biometrics/iris/iris-code.js';
import { encodeIso19794_2 } from '../../../src/biometrics/finger/iso19794-2.js';
import { impression, impressionTemplate, syntheticFinger } from '../../../src/synthetic/finger.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../../src/synthetic/iris-code.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { TemplateCache } from '../../../src/store/template-cache.js';

const biometrics = { fingerThreshold: 40, irisThreshold: 0.32, irisShiftRange: 8 };
const eyeSeed = (emp: number, eye: 'left' | 'right') => emp * 2 + (eye === 'left' ? 0 : 1);
const enrollBytes = (emp: number, eye: 'left' | 'right') =>
  encodeIrisTemplate(syntheticIrisSample(syntheticIrisEye(eyeSeed(emp, eye)), 1).code);
const probeBytes = (emp: number, eye: 'left' | 'right', sample = 5) =>
  encodeIrisTemplate(syntheticIrisSample(syntheticIrisEye(eyeSeed(emp, eye)), sample).code);

const fingerBytes = (finger: number, imp: number) => encodeIso19794_2(impressionTemplate(impression(syntheticFinger(finger), imp)));

let dir: string;
let db: SqliteDatabase;
let cache: TemplateCache;
let identifier: Identifier | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'identifier-'));
  db = await openAgentDatabase(dir);
  cache = await TemplateCache.open(db, { key: randomBytes(32) });
  const batch = [];
  for (let emp = 0; emp < 40; emp++) {
    for (const eye of ['left', 'right'] as const) {
      batch.push({
        id: `t-${emp}-${eye}`,
        employeeCode: `E${emp}`,
        modality: 'iris' as const,
        position: eye,
        format: 'iris-code-v1' as const,
        data: enrollBytes(emp, eye),
      });
    }
  }
  await cache.addTemplates(batch);
});
afterEach(async () => {
  await identifier?.close();
  identifier = undefined;
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Identifier', () => {
  it('identifies enrolled eyes and rejects strangers without naming anyone', async () => {
    identifier = await Identifier.build(cache, { biometrics });
    expect(identifier.size('iris')).toBe(80);
    for (const [emp, eye] of [
      [3, 'left'],
      [17, 'right'],
      [39, 'left'],
    ] as const) {
      const r = await identifier.identify({ modality: 'iris', template: probeBytes(emp, eye) });
      expect(r).toMatchObject({ employeeCode: `E${emp}`, modality: 'iris', decision: 'accept', templateId: `t-${emp}-${eye}` });
      expect(r.score).toBeLessThanOrEqual(0.32);
    }
    const stranger = await identifier.identify({ modality: 'iris', template: probeBytes(500, 'left') });
    expect(stranger.decision).toBe('reject');
    expect(stranger.employeeCode).toBeNull();
    expect(stranger.score).toBeGreaterThan(0.32);
    const iris = identifier.metrics().find((m) => m.modality === 'iris');
    expect(iris).toMatchObject({ modality: 'iris', templates: 80, identifications: 4 });
    expect(iris!.p95Ms).toBeGreaterThanOrEqual(iris!.p50Ms!);
  });

  it('takes a weak capture for its eye only as far as the number of enrolled templates lets a stranger come that close (irisFpir)', async () => {
    // Enrolment 3's left eye, a scattered third of its bits flipped: a real capture at a bad angle.
    const enrolled = decodeIrisTemplate(enrollBytes(3, 'left'));
    const code = enrolled.code.slice();
    for (let i = 0; i < IRIS_CODE_BITS; i++)
      if (((Math.imul(i + 1, 2654435761) >>> 0) % 10_000) / 10_000 < 0.36) setBit(code, i, !getBit(code, i));
    const weak = encodeIrisTemplate({ ...enrolled, code });

    identifier = await Identifier.build(cache, { biometrics });
    const among80 = await identifier.identify({ modality: 'iris', template: weak });
    expect(among80.score).toBeGreaterThan(0.28); // 80 templates allow 0.279 at the default irisFpir 1e-3
    expect(among80.score).toBeLessThanOrEqual(0.32);
    expect(among80).toMatchObject({ decision: 'reject', employeeCode: null, templateId: null });
    await identifier.close();

    // A site that accepts a stranger one search in 20 gets it back, at the same 80 templates.
    identifier = await Identifier.build(cache, { biometrics: { ...biometrics, irisFpir: 0.05 } });
    expect(await identifier.identify({ modality: 'iris', template: weak })).toMatchObject({
      decision: 'accept',
      employeeCode: 'E3',
      templateId: 't-3-left',
      score: among80.score,
    });
    await identifier.close();

    // And so does the default once the gallery is that one eye: everyone else deleted.
    for (let emp = 0; emp < 40; emp++)
      for (const eye of ['left', 'right']) if (emp !== 3 || eye !== 'left') await cache.removeTemplate(`t-${emp}-${eye}`);
    identifier = await Identifier.build(cache, { biometrics });
    expect(identifier.size('iris')).toBe(1);
    expect(await identifier.identify({ modality: 'iris', template: weak })).toMatchObject({ decision: 'accept', employeeCode: 'E3' });
  });

  it('follows enrolments and deletions without a rebuild', async () => {
    identifier = await Identifier.build(cache, { biometrics });
    const newcomer = probeBytes(100, 'right');
    expect((await identifier.identify({ modality: 'iris', template: newcomer })).decision).toBe('reject');
    await cache.addTemplate({
      employeeCode: 'NEW',
      modality: 'iris',
      position: 'right',
      format: 'iris-code-v1',
      data: enrollBytes(100, 'right'),
    });
    expect(await identifier.identify({ modality: 'iris', template: newcomer })).toMatchObject({ employeeCode: 'NEW', decision: 'accept' });
    await cache.deleteUser('E3');
    expect(identifier.size('iris')).toBe(79);
    const r = await identifier.identify({ modality: 'iris', template: probeBytes(3, 'left') });
    expect(r.decision).toBe('reject');
    // Re-assigning a template id to another person moves it.
    await cache.addTemplate({
      id: 't-5-left',
      employeeCode: 'E6',
      modality: 'iris',
      position: 'left',
      format: 'iris-code-v1',
      data: enrollBytes(5, 'left'),
    });
    expect((await identifier.identify({ modality: 'iris', template: probeBytes(5, 'left') })).employeeCode).toBe('E6');
  });

  it('identifies fingers from ISO 19794-2 records with the calibrated score', async () => {
    await cache.addTemplates(
      Array.from({ length: 30 }, (_, f) => ({
        id: `f-${f}`,
        employeeCode: `E${f}`,
        modality: 'finger' as const,
        position: 'right-index',
        format: 'iso19794-2' as const,
        data: fingerBytes(f, 0),
      })),
    );
    identifier = await Identifier.build(cache, { biometrics, matchers: [new FingerMatcher(40)] });
    expect(identifier.size('finger')).toBe(30);
    const hit = await identifier.identify({ modality: 'finger', template: fingerBytes(12, 1) });
    expect(hit).toMatchObject({ employeeCode: 'E12', modality: 'finger', decision: 'accept', templateId: 'f-12' });
    expect(hit.score).toBeGreaterThanOrEqual(40);
    const miss = await identifier.identify({ modality: 'finger', template: fingerBytes(999, 1) });
    expect(miss).toMatchObject({ employeeCode: null, decision: 'reject' });
    expect(miss.score).toBeLessThan(40);
    await cache.deleteUser('E12');
    expect((await identifier.identify({ modality: 'finger', template: fingerBytes(12, 1) })).decision).toBe('reject');
    expect(identifier.metrics().find((m) => m.modality === 'finger')).toMatchObject({ templates: 29, identifications: 3 });
  });

  it('skips templates it cannot index and ones that do not decrypt, and says which', async () => {
    await cache.addTemplate({ employeeCode: 'E1', modality: 'finger', position: '1', format: 'gt521', data: randomBytes(498) });
    await cache.addTemplate({ employeeCode: 'E1', modality: 'finger', position: '2', format: 'iso19794-2', data: randomBytes(100) });
    await cache.addTemplate({
      id: 'garbage',
      employeeCode: 'E2',
      modality: 'iris',
      position: 'left',
      format: 'iris-code-v1',
      data: randomBytes(528),
    });
    await db.transaction((d) => d.run("UPDATE templates SET blob = zeroblob(length(blob)) WHERE id = 't-7-left'").then(() => undefined));
    identifier = await Identifier.build(cache, { biometrics, matchers: [new FingerMatcher(40)] });
    expect(identifier.size('iris')).toBe(79);
    expect(identifier.skipped).toBe(4);
    expect(identifier.size('finger')).toBe(0);
    expect((await identifier.identify({ modality: 'iris', template: probeBytes(7, 'right') })).employeeCode).toBe('E7');
    await expect(identifier.identify({ modality: 'embedding', template: new Uint8Array(4) })).rejects.toMatchObject({
      code: 'BIOMETRICS_MODALITY_UNSUPPORTED',
    });
    await expect(identifier.identify({ modality: 'iris', template: new Uint8Array(4) })).rejects.toMatchObject({
      code: 'BIOMETRICS_TEMPLATE_MALFORMED',
    });
  });
});
