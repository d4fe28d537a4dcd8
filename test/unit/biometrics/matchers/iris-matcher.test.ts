import { afterEach, describe, expect, it } from 'vitest';
import { getBit, IRIS_CODE_BITS, setBit, encodeIrisTemplate, type IrisCode } from '../../../../src/biometrics/iris/iris-code.js';
import { irisIdentificationThreshold } from '../../../../src/biometrics/iris/iris-decision.js';
import { IrisMatcher } from '../../../../src/biometrics/matchers/iris-matcher.js';
import { idealIrisCode, syntheticIrisEye, syntheticIrisSample } from '../../../../src/synthetic/iris-code.js';

const sample = (eye: number, n: number) => encodeIrisTemplate(syntheticIrisSample(syntheticIrisEye(eye), n).code);

/** The eye's ideal code with a scattered share of its bits flipped (a weak capture of that eye). */
function weakCapture(eye: number, share: number): Uint8Array {
  const c: IrisCode = idealIrisCode(syntheticIrisEye(eye));
  const code = c.code.slice();
  for (let i = 0; i < IRIS_CODE_BITS; i++)
    if (((Math.imul(i + 1, 2654435761) >>> 0) % 10_000) / 10_000 < share) setBit(code, i, !getBit(code, i));
  return encodeIrisTemplate({ ...c, code });
}

let matcher: IrisMatcher | null = null;
afterEach(async () => {
  await matcher?.close();
  matcher = null;
});

describe("IrisMatcher (the identifier's iris index)", () => {
  it('indexes iris codes, finds the mate by Hamming distance, and accepts at or below the threshold', async () => {
    const m = new IrisMatcher(0.32, { shiftRange: 8 });
    matcher = m;
    expect(await m.best(sample(1, 2))).toBeNull(); // an empty gallery has no candidate
    for (let eye = 1; eye <= 20; eye++) m.add(`t${eye}`, sample(eye, 1));
    expect(m.size).toBe(20);
    const best = await m.best(sample(7, 3));
    expect(best?.id).toBe('t7');
    expect(m.accepts(best!.score)).toBe(true);
    const stranger = await m.best(sample(999, 1));
    expect(stranger).not.toBeNull();
    expect(m.accepts(stranger!.score)).toBe(false);
    expect(m.holds('t7', sample(7, 1))).toBe(true);
    m.remove('t7');
    expect(m.size).toBe(19);
    expect((await m.best(sample(7, 3)))?.id).not.toBe('t7');
    expect(() => m.add('bad', new Uint8Array(7))).toThrow(expect.objectContaining({ code: expect.stringMatching(/^BIOMETRICS_/) }));
  });

  it('accepts a weak capture of an enrolled eye alone, and refuses it once the gallery is large enough for a stranger to come as close', async () => {
    const m = new IrisMatcher(0.32, { shiftRange: 8 });
    matcher = m;
    m.add('mate', encodeIrisTemplate(idealIrisCode(syntheticIrisEye(5))));
    const probe = weakCapture(5, 0.37);
    const alone = await m.best(probe);
    expect(alone?.id).toBe('mate');
    expect(alone!.score).toBeGreaterThan(0.28);
    expect(alone!.score).toBeLessThan(0.32);
    expect(m.acceptAt).toBe(0.32);
    expect(m.accepts(alone!.score)).toBe(true);
    for (let eye = 100; eye < 300; eye++) m.add(`s${eye}`, sample(eye, 1));
    const among = await m.best(probe);
    expect(among).toEqual(alone); // still the best candidate, now not close enough for 201 templates
    expect(m.acceptAt).toBeCloseTo(irisIdentificationThreshold(0.32, 201), 12);
    expect(m.acceptAt).toBeLessThan(alone!.score);
    expect(m.accepts(among!.score)).toBe(false);
    // A site that sets a far looser biometrics.irisFpir takes it back.
    const loose = new IrisMatcher(0.32, { shiftRange: 8, fpir: 0.5 });
    try {
      for (let eye = 100; eye < 300; eye++) loose.add(`s${eye}`, sample(eye, 1));
      expect(loose.accepts(among!.score)).toBe(true);
    } finally {
      await loose.close();
    }
    expect(() => new IrisMatcher(0.32, { fpir: 0 })).toThrow(RangeError);
  });
});
