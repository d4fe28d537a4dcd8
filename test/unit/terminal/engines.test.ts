// The embedding slot's maker (createEmbedder) with the real model fixture, a real identifier on an
// encrypted SQLite template cache, and the recognizer's host path.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddingMatcher } from '../../../src/biometrics/matchers/embedding-matcher.js';
import { parseConfig } from '../../../src/config/config.js';
import { SqliteDatabase } from '../../../src/core/sqlite.js';
import { TemplateCache } from '../../../src/store/template-cache.js';
import { renderFingerImage } from '../../../src/synthetic/finger-image.js';
import { createEmbedder } from '../../../src/terminal/engines.js';
import { Identifier } from '../../../src/terminal/identifier.js';
import { Recognizer } from '../../../src/terminal/recognizer.js';

describe('the embedding slot in the agent', () => {
  it('a configured model identifies from the image on the host path (no code change, only config)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'embed-'));
    const config = parseConfig({
      dataDir: dir,
      biometrics: { embedding: { model: 'embedding-tiny.onnx', width: 32, height: 32, source: 'finger', threshold: 0.999 } },
    });
    const db = await SqliteDatabase.open(join(dir, 'agent.db'));
    try {
      const cache = await TemplateCache.open(db, { key: randomBytes(32) });
      const embedder = createEmbedder(config.biometrics.embedding)!;
      expect(embedder.source).toBe('finger');
      const identifier = await Identifier.build(cache, {
        biometrics: config.biometrics,
        matchers: [new EmbeddingMatcher(config.biometrics.embedding!.threshold)],
      });
      // No extractor here: an accept can only come from the embedding slot.
      const recognizer = new Recognizer({ identifier, extractor: null, embedder, slots: null });
      const imageA = { ...renderFingerImage(11, 1), sourceBitsPerPixel: 8, dpi: 500, quality: null };
      const imageB = { ...renderFingerImage(12, 1), sourceBitsPerPixel: 8, dpi: 500, quality: null };
      await cache.addTemplate({
        employeeCode: 'E1',
        modality: 'embedding',
        position: 'right-index',
        format: 'embedding-f32',
        data: await embedder.embed(imageA),
      });
      expect(identifier.size('embedding')).toBe(1);
      const same = await recognizer.image('finger', imageA);
      expect(same).toMatchObject({ employeeCode: 'E1', decision: 'accept', modality: 'finger', path: 'host' });
      // Another finger is judged by the cosine threshold: with 0.999 the untrained fixture does not
      // mistake it for E1 unless its vector is nearly identical.
      const other = await recognizer.image('finger', imageB);
      const sim = await identifier.identify({ modality: 'embedding', template: await embedder.embed(imageB) });
      expect(other.decision).toBe((sim.score ?? 0) >= 0.999 ? 'accept' : 'reject');
      await identifier.close();
      expect(createEmbedder(null)).toBeNull();
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
