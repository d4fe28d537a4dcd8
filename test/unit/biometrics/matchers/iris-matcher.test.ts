import { afterEach, describe, expect, it } from 'vitest';
import { encodeIrisTemplate } from '../../../../src/biometrics/iris/iris-code.js';
import { IrisMatcher } from '../../../../src/biometrics/matchers/iris-matcher.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../../../src/synthetic/iris-code.js';

const sample = (eye: number, n: number) => encodeIrisTemplate(syntheticIrisSample(syntheticIrisEye(eye), n).code);

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
});
