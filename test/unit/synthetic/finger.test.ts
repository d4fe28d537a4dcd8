import { describe, expect, it } from 'vitest';
import { impression, impressionTemplate, syntheticFinger } from '../../../src/synthetic/finger.js';

describe('syntheticFinger', () => {
  it('is reproducible by seed and differs between seeds', () => {
    const a = syntheticFinger(42);
    const b = syntheticFinger(42);
    const c = syntheticFinger(43);
    expect(a.minutiae).toEqual(b.minutiae);
    expect(a.phase(100, 120)).toBe(b.phase(100, 120));
    expect(c.minutiae).not.toEqual(a.minutiae);
  });

  it('has 35..70 minutiae inside the image, at least 12 px apart', () => {
    for (let seed = 0; seed < 25; seed++) {
      const f = syntheticFinger(seed);
      expect(f.minutiae.length).toBeGreaterThanOrEqual(35);
      expect(f.minutiae.length).toBeLessThanOrEqual(70);
      for (const m of f.minutiae) {
        expect(m.x).toBeGreaterThanOrEqual(0);
        expect(m.y).toBeGreaterThanOrEqual(0);
        expect(m.x).toBeLessThan(f.width);
        expect(m.y).toBeLessThan(f.height);
        expect(m.angle).toBeGreaterThanOrEqual(0);
        expect(m.angle).toBeLessThan(2 * Math.PI);
      }
      for (let i = 0; i < f.minutiae.length; i++)
        for (let j = 0; j < i; j++)
          expect(Math.hypot(f.minutiae[i]!.x - f.minutiae[j]!.x, f.minutiae[i]!.y - f.minutiae[j]!.y)).toBeGreaterThanOrEqual(12);
    }
  });

  it('types and directions agree with the rendered ridge pattern cos(phase)', () => {
    const f = syntheticFinger(7);
    for (const m of f.minutiae) {
      let ring = 0;
      for (let k = 0; k < 64; k++) {
        const t = (k / 64) * 2 * Math.PI;
        ring += Math.cos(f.phase(m.x + 2 * Math.cos(t), m.y + 2 * Math.sin(t)));
      }
      // A bifurcation sits on ridge (mostly ridge around it), an ending on valley.
      expect(ring > 0).toBe(m.type === 'bifurcation');
      // ISO direction: an ending points into its ridge, a bifurcation into the valley between branches.
      const ahead = Math.cos(f.phase(m.x + 4 * Math.cos(m.angle), m.y - 4 * Math.sin(m.angle)));
      expect(ahead > 0).toBe(m.type === 'ending');
    }
  });
});

describe('impression', () => {
  it('is reproducible and maps minutiae consistently with toMaster', () => {
    const f = syntheticFinger(3);
    const a = impression(f, 1);
    expect(impression(f, 1).minutiae).toEqual(a.minutiae);
    expect(Math.abs(a.rotation)).toBeLessThanOrEqual((20 * Math.PI) / 180);
    expect(Math.abs(a.dx)).toBeLessThanOrEqual(30);
    expect(Math.abs(a.dy)).toBeLessThanOrEqual(30);
    const exact = impression(f, 1, { positionNoise: 0, angleNoiseDeg: 0, dropRate: 0, spuriousRate: 0 });
    expect(exact.masterIndex.every((i) => i >= 0)).toBe(true);
    exact.minutiae.forEach((m, k) => {
      const src = f.minutiae[exact.masterIndex[k]!]!;
      const [mx, my] = exact.toMaster(m.x, m.y);
      expect(Math.hypot(mx - src.x, my - src.y)).toBeLessThan(0.01);
      expect(m.x).toBeGreaterThanOrEqual(0);
      expect(m.x).toBeLessThan(exact.width);
    });
  });

  it('drops and adds minutiae when asked, and makes a template', () => {
    const f = syntheticFinger(5);
    const imp = impression(f, 2, { dropRate: 0.3, spuriousRate: 0.3 });
    expect(imp.masterIndex.some((i) => i < 0)).toBe(true);
    expect(imp.masterIndex.filter((i) => i >= 0).length).toBeLessThan(f.minutiae.length);
    const t = impressionTemplate(imp);
    expect(t.minutiae.length).toBe(imp.minutiae.length);
    expect(t.minutiae.every((m) => Number.isInteger(m.x) && Number.isInteger(m.y))).toBe(true);
  });
});
