import { describe, expect, it } from 'vitest';
import { FingerMatcher } from '../../../src/daemon/biometric-engines.js';
import { encodeIso19794_2 } from '../../../src/biometrics/finger/iso19794-2.js';
import { impression, syntheticFinger } from '../../../src/synthetic/finger.js';
import type { FingerTemplate } from '../../../src/biometrics/finger/template.js';

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
});

describe('the embedding slot in the agent', () => {
  it('stores embeddings as float32 bytes and matches them 1:N by cosine similarity', async () => {
    const { EmbeddingMatcher, embeddingFromBytes, embeddingToBytes } = await import('../../../src/daemon/biometric-engines.js');
    const v = Float32Array.from([0.6, 0.8, 0]);
    expect([...embeddingFromBytes(embeddingToBytes(v))]).toEqual([...v].map((x) => Math.fround(x)));
    expect(() => embeddingFromBytes(new Uint8Array(5))).toThrow(expect.objectContaining({ code: 'BIOMETRICS_TEMPLATE_MALFORMED' }));
    const m = new EmbeddingMatcher(0.9);
    m.add('a', embeddingToBytes(Float32Array.from([1, 0, 0])));
    m.add('b', embeddingToBytes(Float32Array.from([0, 1, 0])));
    const best = await m.best(Float32Array.from([0.1, 0.99, 0]));
    expect(best?.id).toBe('b');
    expect(m.accepts(best!.score)).toBe(true);
    expect(m.accepts((await m.best(Float32Array.from([0.7, 0.7, 0])))!.score)).toBe(false);
  });

  it('a configured model identifies from the image on the host path (no code change, only config)', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { randomBytes } = await import('node:crypto');
    const { parseConfig } = await import('../../../src/config/config.js');
    const { emptySecrets } = await import('../../../src/config/secrets.js');
    const { SqliteDatabase } = await import('../../../src/core/sqlite.js');
    const { TemplateCache } = await import('../../../src/store/template-cache.js');
    const { Identifier } = await import('../../../src/terminal/identifier.js');
    const { TerminalRuntime } = await import('../../../src/daemon/runtime.js');
    const { createEmbedder, createEmbeddingMatcher } = await import('../../../src/daemon/biometric-engines.js');
    const { renderFingerImage } = await import('../../../src/synthetic/finger-image.js');
    const dir = mkdtempSync(join(tmpdir(), 'embed-'));
    const config = parseConfig({
      dataDir: dir,
      biometrics: { embedding: { model: 'embedding-tiny.onnx', width: 32, height: 32, source: 'finger', threshold: 0.999 } },
    });
    const key = randomBytes(32);
    const db = await SqliteDatabase.open(join(dir, 'agent.db'));
    const cache = await TemplateCache.open(db, { key });
    const rt = new TerminalRuntime(config, { ...emptySecrets(), templateKey: key });
    rt.cache = cache;
    rt.embedder = createEmbedder(config);
    rt.identifier = await Identifier.build(cache, { biometrics: config.biometrics, matchers: [createEmbeddingMatcher(config)!] });
    const imageA = { ...renderFingerImage(11, 1), sourceBitsPerPixel: 8, dpi: 500, quality: null };
    const imageB = { ...renderFingerImage(12, 1), sourceBitsPerPixel: 8, dpi: 500, quality: null };
    await cache.addTemplate({
      employeeCode: 'E1',
      modality: 'embedding',
      position: 'right-index',
      format: 'embedding-f32',
      data: await rt.embedder!.embed(imageA),
    });
    expect(rt.identifier.size('embedding')).toBe(1);
    // No extractor here: an accept can only come from the embedding slot.
    const same = await rt.identifyImage('finger', imageA);
    expect(same).toMatchObject({ employeeCode: 'E1', decision: 'accept' });
    // Another finger is judged by the cosine threshold: with 0.999 the untrained fixture does not
    // mistake it for E1 unless its vector is nearly identical.
    const other = await rt.identifyImage('finger', imageB);
    const sim = await rt.identifier.identify({ modality: 'embedding', template: await rt.embedder!.embed(imageB) });
    expect(other.decision).toBe((sim.score ?? 0) >= 0.999 ? 'accept' : 'reject');
    await rt.identifier.close();
    await db.close();
  });
});
