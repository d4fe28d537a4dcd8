import { afterAll, describe, expect, it } from 'vitest';
import { IrisIndex } from '../../../../src/biometrics/iris/iris-index.js';
import { compareIrisCodes } from '../../../../src/biometrics/iris/iris-match.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../../../src/synthetic/iris-code.js';

const N = 3000;
const enroll = (i: number) => syntheticIrisSample(syntheticIrisEye(i), 1).code;
const probe = (i: number, sample = 2) => syntheticIrisSample(syntheticIrisEye(i), sample).code;

const indexes: IrisIndex[] = [];
function build(options: ConstructorParameters<typeof IrisIndex>[0] = {}): IrisIndex {
  const idx = new IrisIndex(options);
  indexes.push(idx);
  for (let i = 0; i < N; i++) idx.add(`emp-${i}`, enroll(i));
  return idx;
}
afterAll(async () => {
  for (const idx of indexes) await idx.close();
});

describe('IrisIndex', () => {
  const idx = build({ workers: 2, workerThreshold: 1000 });

  it('finds the right eye among thousands, with the exact 1:1 score', async () => {
    for (const i of [0, 17, 1234, 2999]) {
      const p = probe(i);
      const [best] = await idx.identify(p);
      expect(best?.id).toBe(`emp-${i}`);
      const oneToOne = compareIrisCodes(p, enroll(i));
      expect(best?.hd).toBe(oneToOne.hd);
      expect(best?.shift).toBe(oneToOne.shift);
    }
  });

  it('returns nobody for an unenrolled eye at the default threshold', async () => {
    expect(await idx.identify(probe(N + 50))).toEqual([]);
    const loose = await idx.identify(probe(N + 50), { threshold: 1, candidates: 3 });
    expect(loose).toHaveLength(3);
    expect(loose[0]!.hd).toBeGreaterThan(0.32);
    expect(loose[0]!.hd).toBeLessThanOrEqual(loose[1]!.hd);
  });

  it('the worker path agrees with the in-process path', async () => {
    for (const i of [5, 999, 2500, N + 3]) {
      const p = probe(i, 9);
      const viaWorkers = await idx.identify(p, { path: 'workers', candidates: 3, threshold: 1 });
      expect(viaWorkers).toHaveLength(3);
      if (i < N) expect(viaWorkers[0]!.id).toBe(`emp-${i}`);
      expect(viaWorkers).toEqual(idx.identifySync(p, { candidates: 3, threshold: 1 }));
    }
    // With a prefilter covering the whole gallery both paths score everyone exactly: equal lists.
    const exact = build({ workers: 2, workerThreshold: 1, prefilter: N });
    const p = probe(N + 7);
    const a = await exact.identify(p, { path: 'workers', candidates: 25, threshold: 1 });
    const b = exact.identifySync(p, { candidates: 25, threshold: 1 });
    expect(a).toHaveLength(25);
    expect(a).toEqual(b);
  });

  it('the workers compute the sketch scan right when the caller leaves it to them', async () => {
    await idx.identify(probe(1), { path: 'workers' }); // the workers are up
    for (let tries = 0; tries < 50; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      const p = probe(77, 3);
      const r = await idx.identify(p, { path: 'workers', callerScans: false, candidates: 2, threshold: 1 });
      expect(r).toEqual(idx.identifySync(p, { candidates: 2, threshold: 1 }));
      const split = idx.lastSplit!;
      expect(split.chunks).toBeGreaterThan(1);
      if (split.byWorkers === split.chunks) return;
    }
    throw new Error(`the workers never did the whole scan: ${JSON.stringify(idx.lastSplit)}`);
  });

  it('split searches reuse their shared buffers: no shared allocation per search', async () => {
    const before = idx.scratchAllocations;
    for (let k = 0; k < 40; k++) {
      const p = probe(k * 70, 5);
      const r = await idx.identify(p, { path: 'workers', candidates: 2, threshold: 1 });
      expect(r).toEqual(idx.identifySync(p, { candidates: 2, threshold: 1 }));
    }
    // A set is made again only while a late worker still sits in every existing one: a handful at
    // most, never one per search.
    expect(idx.scratchAllocations - before).toBeLessThanOrEqual(3);
  });

  it('sizes its gallery at once when told how many codes come, and grows by half after', () => {
    const sized = new IrisIndex({ workers: 0 });
    indexes.push(sized);
    sized.reserve(2000);
    expect(sized.galleryBytes).toBe(2000 * 544);
    for (let i = 0; i < 2001; i++) sized.add(`e${i}`, enroll(i % 50));
    expect(sized.galleryBytes).toBe(3000 * 544);
  });

  it('splits a search only for a large gallery and with workers', () => {
    const split = new IrisIndex({ workers: 1, workerThreshold: 2 });
    indexes.push(split);
    split.add('a', enroll(1));
    expect(split.wouldSplit()).toBe(false);
    split.add('b', enroll(2));
    expect(split.wouldSplit()).toBe(true);
    const none = new IrisIndex({ workers: 0, workerThreshold: 1, loadAware: false });
    none.add('a', enroll(1));
    expect(none.wouldSplit()).toBe(false);
  });

  it('adds, replaces and removes incrementally', async () => {
    const small = new IrisIndex({ workers: 0 });
    indexes.push(small);
    small.add('a', enroll(1));
    small.add('b', enroll(2));
    small.add('c', enroll(3));
    expect(small.size).toBe(3);
    expect(small.remove('a')).toBe(true);
    expect(small.remove('a')).toBe(false);
    expect(small.size).toBe(2);
    expect(await small.identify(probe(1))).toEqual([]);
    expect((await small.identify(probe(3)))[0]?.id).toBe('c');
    small.add('b', enroll(4));
    expect(small.size).toBe(2);
    expect((await small.identify(probe(4)))[0]?.id).toBe('b');
    expect(await small.identify(probe(2))).toEqual([]);
    expect(small.bytesPerTemplate()).toBe(544);
  });

  it('a search on the worker path sees the changes made before it', async () => {
    const p = probe(42);
    expect((await idx.identify(p, { path: 'workers' }))[0]?.id).toBe('emp-42');
    expect(idx.remove('emp-42')).toBe(true);
    idx.add('late', enroll(N + 1));
    expect(await idx.identify(p, { path: 'workers' })).toEqual([]);
    expect((await idx.identify(probe(N + 1), { path: 'workers' }))[0]?.id).toBe('late');
  });
});
