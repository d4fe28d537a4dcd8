import { describe, expect, it } from 'vitest';
import { FingerProbe, compareFingerTemplates, matchDetail, prepareFinger } from '../../../../src/biometrics/finger/matcher.js';
import { normalizeAngle, type FingerTemplate } from '../../../../src/biometrics/finger/template.js';
import { impression, impressionTemplate, syntheticFinger } from '../../../../src/synthetic/finger.js';

function rigid(t: FingerTemplate, rot: number, dx: number, dy: number): FingerTemplate {
  const cx = t.width / 2;
  const cy = t.height / 2;
  const c = Math.cos(rot);
  const s = Math.sin(rot);
  return {
    ...t,
    width: t.width + 100,
    height: t.height + 100,
    minutiae: t.minutiae.map((m) => {
      const x = m.x - cx;
      const y = m.y - cy;
      // Image coordinates (y down): rotating by +rot turns directions by −rot in the ISO convention.
      return { ...m, x: c * x - s * y + cx + dx + 50, y: s * x + c * y + cy + dy + 50, angle: normalizeAngle(m.angle - rot) };
    }),
  };
}

describe('finger matcher', () => {
  const fingers = Array.from({ length: 30 }, (_, i) => syntheticFinger(5000 + i));
  const first = fingers.map((f) => impressionTemplate(impression(f, 0)));
  const second = fingers.map((f) => impressionTemplate(impression(f, 1)));

  it('scores genuine pairs above every impostor pair of a seeded set (all but the hardest)', () => {
    const genuine = fingers.map((_, i) => compareFingerTemplates(first[i]!, second[i]!));
    const prepared = first.map(prepareFinger);
    let maxImpostor = 0;
    for (let i = 0; i < fingers.length; i++) {
      const probe = new FingerProbe(prepareFinger(second[i]!));
      for (let j = 0; j < fingers.length; j++) if (j !== i) maxImpostor = Math.max(maxImpostor, matchDetail(probe, prepared[j]!).score);
    }
    // Impressions may overlap little (±20°, ±30 px each): allow 2 of 30 hard genuine pairs.
    expect(genuine.filter((g) => g > maxImpostor).length).toBeGreaterThanOrEqual(28);
    expect(genuine.filter((g) => g >= 40).length).toBeGreaterThanOrEqual(27);
    expect(maxImpostor).toBeLessThan(40);
  });

  it('is invariant to rotation (±20°) and translation (±30 px)', () => {
    const t = first[3]!;
    const self = compareFingerTemplates(t, t);
    expect(self).toBeGreaterThan(60);
    for (const [rot, dx, dy] of [
      [0.35, 30, -30],
      [-0.35, -30, 30],
      [0.1, 0, 25],
    ] as const) {
      const moved = compareFingerTemplates(t, rigid(t, rot, dx, dy));
      expect(moved).toBeGreaterThan(self * 0.8);
    }
  });

  it('pairs most minutiae of an exact copy and none of an empty template', () => {
    const t = first[0]!;
    const d = matchDetail(new FingerProbe(prepareFinger(t)), prepareFinger(t));
    expect(d.paired).toBeGreaterThan(t.minutiae.length * 0.8);
    expect(compareFingerTemplates(t, { ...t, minutiae: [] })).toBe(0);
    expect(compareFingerTemplates({ ...t, minutiae: t.minutiae.slice(0, 1) }, t)).toBe(0);
  });

  it('compares templates of different resolutions in the same units (500 dpi)', () => {
    const t = first[5]!;
    const self = compareFingerTemplates(t, t);
    // The same finger recorded at 1000 dpi: twice the pixels, twice the resolution.
    const at1000 = {
      ...t,
      width: t.width * 2,
      height: t.height * 2,
      resolutionPpcm: 2 * t.resolutionPpcm,
      minutiae: t.minutiae.map((m) => ({ ...m, x: m.x * 2, y: m.y * 2 })),
    };
    expect(compareFingerTemplates(t, at1000)).toBeCloseTo(self, 0);
    // Told the wrong resolution, the edges no longer agree.
    expect(compareFingerTemplates(t, { ...at1000, resolutionPpcm: t.resolutionPpcm })).toBeLessThan(self / 2);
  });

  it('pairs minutiae whose neighbours differ between impressions (spurious and missing minutiae)', () => {
    const t = second[7]!;
    const self = matchDetail(new FingerProbe(prepareFinger(t)), prepareFinger(t));
    // Every third minutia lost and as many spurious ones added: the edges of most minutiae change.
    const noisy = {
      ...t,
      minutiae: [
        ...t.minutiae.filter((_, i) => i % 3 !== 0),
        ...t.minutiae
          .filter((_, i) => i % 3 === 0)
          .map((m) => ({ ...m, x: (m.x + 23) % t.width, y: (m.y + 37) % t.height, angle: normalizeAngle(m.angle + 2) })),
      ],
    };
    const d = matchDetail(new FingerProbe(prepareFinger(t)), prepareFinger(noisy));
    expect(d.paired).toBeGreaterThanOrEqual(Math.floor((t.minutiae.length * 2) / 3) - 2);
    expect(d.score).toBeGreaterThan(40);
    expect(d.raw).toBeLessThan(self.raw);
  });
});
