import { describe, expect, it } from 'vitest';
import { FingerMatcher } from '../../../../src/biometrics/matchers/finger-matcher.js';
import { encodeIso19794_2 } from '../../../../src/biometrics/finger/iso19794-2.js';
import { impression, syntheticFinger } from '../../../../src/synthetic/finger.js';
import type { FingerTemplate } from '../../../../src/biometrics/finger/template.js';

function template(fingerSeed: number, impressionSeed: number): FingerTemplate {
  const f = syntheticFinger(fingerSeed);
  const imp = impression(f, impressionSeed);
  return { width: f.width, height: f.height, resolutionPpcm: 197, quality: 80, minutiae: imp.minutiae };
}

describe("FingerMatcher (the identifier's finger index)", () => {
  it('indexes ISO templates, finds the mate among others, and accepts by the config threshold', async () => {
    const m = new FingerMatcher(40);
    for (let i = 1; i <= 30; i++) m.add(`t${i}`, encodeIso19794_2(template(i, 1)));
    expect(m.size).toBe(30);
    const best = await m.best(encodeIso19794_2(template(17, 2)));
    expect(best?.id).toBe('t17');
    expect(m.accepts(best!.score)).toBe(true);
    const stranger = await m.best(encodeIso19794_2(template(999, 2)));
    expect(stranger === null || !m.accepts(stranger.score)).toBe(true);
    m.remove('t17');
    const after = await m.best(encodeIso19794_2(template(17, 2)));
    expect(after?.id).not.toBe('t17');
    await expect(m.best('nonsense')).rejects.toMatchObject({ code: 'BIOMETRICS_TEMPLATE_MALFORMED' });
  });

  it('decides by person: two templates of one person never compete, and a finger on file under two persons is no accept', async () => {
    const m = new FingerMatcher(40);
    const owner = new Map<string, string>();
    for (let i = 1; i <= 30; i++) {
      m.add(`t${i}`, encodeIso19794_2(template(i, 1)));
      owner.set(`t${i}`, `E${i}`);
    }
    // a second capture of E5's finger: still one person
    m.add('t5b', encodeIso19794_2(template(5, 3)));
    owner.set('t5b', 'E5');
    const personOf = (id: string) => owner.get(id) ?? null;
    const hit = await m.decide(encodeIso19794_2(template(5, 2)), personOf);
    expect(['t5', 't5b']).toContain(hit.templateId);
    expect(hit.score).toBeGreaterThanOrEqual(40);
    expect((await m.decide(encodeIso19794_2(template(999, 2)), personOf)).templateId).toBeNull();
    // the same finger enrolled under E7 and E8: ambiguous, so rejected (the daemon asks no second finger yet)
    m.add('t7dup', encodeIso19794_2(template(7, 1)));
    owner.set('t7dup', 'E8');
    const dup = await m.decide(encodeIso19794_2(template(7, 2)), personOf);
    expect(dup.templateId).toBeNull();
    expect(dup.score).toBeGreaterThanOrEqual(40);
    expect(await new FingerMatcher(40).decide(encodeIso19794_2(template(1, 2)), personOf)).toEqual({ templateId: null, score: null });
  });
});
