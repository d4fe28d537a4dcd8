import { describe, expect, it } from 'vitest';
import { FingerIndex } from '../../../../src/biometrics/finger/index.js';
import { impression, impressionTemplate, syntheticFinger } from '../../../../src/synthetic/finger.js';

describe('FingerIndex', () => {
  const N = 300;
  const enrolled = Array.from({ length: N }, (_, i) => impressionTemplate(impression(syntheticFinger(7000 + i), 0)));
  const probeOf = (i: number) => impressionTemplate(impression(syntheticFinger(7000 + i), 1));

  it('finds the right id among many and stays under 4 KB per template', () => {
    const index = new FingerIndex();
    enrolled.forEach((t, i) => {
      index.add(`emp-${i}`, t);
    });
    expect(index.size).toBe(N);
    let hits = 0;
    for (const i of [0, 17, 99, 150, 299]) {
      const res = index.identify(probeOf(i));
      if (res[0]?.id === `emp-${i}`) hits++;
      for (let k = 1; k < res.length; k++) expect(res[k - 1]!.score).toBeGreaterThanOrEqual(res[k]!.score);
      expect(res.every((r) => r.score >= 40)).toBe(true);
    }
    expect(hits).toBeGreaterThanOrEqual(4);
    expect(index.bytesPerTemplate()).toBeLessThan(4096);
    expect(index.bytesPerTemplate()).toBeGreaterThan(500);
  });

  it('reuses its search buffers: the same probe gets the same answer after other searches', () => {
    const index = new FingerIndex();
    enrolled.slice(0, 120).forEach((t, i) => {
      index.add(`emp-${i}`, t);
    });
    const first = index.identify(probeOf(7), { threshold: 0, candidates: 50 });
    for (const i of [3, 90, 44, 118]) index.identify(probeOf(i), { threshold: 0, candidates: 50 });
    expect(index.identify(probeOf(7), { threshold: 0, candidates: 50 })).toEqual(first);
    expect(first[0]?.id).toBe('emp-7');
  });

  it('a non-enrolled finger finds nobody at the default threshold', () => {
    const index = new FingerIndex();
    enrolled.slice(0, 100).forEach((t, i) => {
      index.add(`emp-${i}`, t);
    });
    const stranger = impressionTemplate(impression(syntheticFinger(99_999), 1));
    expect(index.identify(stranger)).toEqual([]);
  });

  it('removes and replaces incrementally (compacting the arena) and keeps finding the rest', () => {
    const index = new FingerIndex();
    enrolled.slice(0, 60).forEach((t, i) => {
      index.add(`emp-${i}`, t);
    });
    expect(index.remove('emp-5')).toBe(true);
    expect(index.remove('emp-5')).toBe(false);
    expect(index.identify(probeOf(5)).find((r) => r.id === 'emp-5')).toBeUndefined();
    for (let i = 10; i < 40; i++) index.remove(`emp-${i}`); // forces a compaction
    expect(index.size).toBe(29);
    expect(index.identify(probeOf(45))[0]?.id).toBe('emp-45');
    expect(index.identify(probeOf(2))[0]?.id).toBe('emp-2');
    // Re-adding an id replaces its template.
    index.add('emp-2', enrolled[50]!);
    expect(index.size).toBe(29);
    const res = index.identify(probeOf(50));
    expect(res.map((r) => r.id).sort()).toEqual(['emp-2', 'emp-50']);
    expect(index.identify(probeOf(2)).find((r) => r.id === 'emp-2')).toBeUndefined();
  });

  it('limits the full pass to the requested number of candidates', () => {
    const index = new FingerIndex();
    enrolled.slice(0, 100).forEach((t, i) => {
      index.add(`emp-${i}`, t);
    });
    expect(index.identify(probeOf(3), { threshold: 0, candidates: 7 }).length).toBeLessThanOrEqual(7);
    expect(index.identify(probeOf(3), { threshold: 0, candidates: 100 }).length).toBeGreaterThan(7);
  });
});
