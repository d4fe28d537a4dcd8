import { describe, expect, it } from 'vitest';
import { embeddingFromBytes, embeddingToBytes } from '../../../../src/biometrics/matchers/embedding-bytes.js';

describe('embedding-f32 bytes', () => {
  it('stores embeddings as little-endian float32 bytes and refuses a length that is not whole values', () => {
    const v = Float32Array.from([0.6, 0.8, 0]);
    expect([...embeddingFromBytes(embeddingToBytes(v))]).toEqual([...v].map((x) => Math.fround(x)));
    expect(() => embeddingFromBytes(new Uint8Array(5))).toThrow(expect.objectContaining({ code: 'BIOMETRICS_TEMPLATE_MALFORMED' }));
  });
});
