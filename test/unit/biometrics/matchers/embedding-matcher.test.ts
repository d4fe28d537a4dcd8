import { describe, expect, it } from 'vitest';
import { embeddingToBytes } from '../../../../src/biometrics/matchers/embedding-bytes.js';
import { EmbeddingMatcher } from '../../../../src/biometrics/matchers/embedding-matcher.js';

describe('EmbeddingMatcher (the embedding slot in the identifier)', () => {
  it('matches embedding-f32 templates 1:N by cosine similarity, accepted by the threshold', async () => {
    const m = new EmbeddingMatcher(0.9);
    m.add('a', embeddingToBytes(Float32Array.from([1, 0, 0])));
    m.add('b', embeddingToBytes(Float32Array.from([0, 1, 0])));
    const best = await m.best(Float32Array.from([0.1, 0.99, 0]));
    expect(best?.id).toBe('b');
    expect(m.accepts(best!.score)).toBe(true);
    expect(m.accepts((await m.best(Float32Array.from([0.7, 0.7, 0])))!.score)).toBe(false);
  });
});
