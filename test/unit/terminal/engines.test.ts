import { describe, expect, it } from 'vitest';

describe('the embedding slot in the agent', () => {
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
    const { createEmbedder } = await import('../../../src/terminal/engines.js');
    const { EmbeddingMatcher } = await import('../../../src/biometrics/matchers/embedding-matcher.js');
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
    rt.embedder = createEmbedder(config.biometrics.embedding);
    rt.identifier = await Identifier.build(cache, {
      biometrics: config.biometrics,
      matchers: [new EmbeddingMatcher(config.biometrics.embedding!.threshold)],
    });
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
