import { describe, expect, it } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import {
  EmbeddingIndex,
  cosineSimilarity,
  embedImage,
  embeddingModelConfig,
  type EmbeddingModelConfig,
} from '../../../../src/biometrics/extract/embedding-slot.js';
import { renderEye } from '../../../../src/synthetic/eye-image.js';
import { syntheticFingerImage } from '../../../../src/synthetic/finger-image.js';

// As the agent configuration's biometrics.embedding block states it.
const cfg: EmbeddingModelConfig = embeddingModelConfig({
  model: 'embedding-tiny.onnx',
  width: 32,
  height: 32,
  mean: 0.5,
  std: 0.25,
  outputName: 'embedding',
});

describe('embedding slot', () => {
  it('embeds images with a configured model and identifies 1:N by cosine similarity', async () => {
    const images = [
      syntheticFingerImage(41, 1, 128, 128),
      syntheticFingerImage(42, 1, 128, 128),
      renderEye(43, 1, { width: 128, height: 128 }),
      { width: 64, height: 64, pixels: new Uint8Array(4096).map((_, i) => (i % 64) * 4) },
    ];
    const index = new EmbeddingIndex(16);
    const vecs: Float32Array[] = [];
    for (const [k, img] of images.entries()) {
      const v = await embedImage(img, cfg);
      expect(v.length).toBe(16);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
      vecs.push(v);
      index.add(`p${k}`, v);
    }
    for (const [k, v] of vecs.entries()) {
      const [top] = index.identify(v, 0.5, 3);
      expect(top!.id).toBe(`p${k}`);
      expect(top!.score).toBeCloseTo(1, 5);
    }
    expect(cosineSimilarity(vecs[0]!, vecs[3]!)).toBeLessThan(0.999);
    expect(index.remove('p1')).toBe(true);
    expect(index.identify(vecs[1]!, 0.9999).map((r) => r.id)).not.toContain('p1');
    expect(index.size).toBe(3);
  });

  it('says what is wrong with a misconfigured slot', async () => {
    const img = { width: 32, height: 32, pixels: new Uint8Array(1024).fill(128) };
    const badName = await embedImage(img, { ...cfg, outputName: 'nope' }).catch((e: unknown) => e);
    expect(isAgentError(badName, 'BIOMETRICS_MODEL_INVALID')).toBe(true);
    const badSize = await embedImage(img, { ...cfg, inputWidth: 48 }).catch((e: unknown) => e);
    expect(isAgentError(badSize, 'BIOMETRICS_MODEL_INVALID')).toBe(true);
    let missing: unknown;
    try {
      await embedImage(img, { ...cfg, modelPath: '/nonexistent/model.onnx' });
    } catch (e) {
      missing = e;
    }
    expect(isAgentError(missing, 'BIOMETRICS_MODEL_MISSING')).toBe(true);
  });
});
