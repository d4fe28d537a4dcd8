/** The embedding slot in the 1:N identifier: cosine similarity, accepted at `threshold` and above. */
import { AgentError } from '../../core/errors.js';
import { EmbeddingIndex } from '../extract/embedding-slot.js';
import { embeddingFromBytes } from './embedding-bytes.js';
import type { ModalityMatcher } from './modality-matcher.js';

export class EmbeddingMatcher implements ModalityMatcher {
  readonly modality = 'embedding' as const;
  readonly formats = ['embedding-f32'] as const;
  #index: EmbeddingIndex | null = null;
  readonly #threshold: number;

  constructor(threshold: number) {
    this.#threshold = threshold;
  }

  get size(): number {
    return this.#index?.size ?? 0;
  }

  add(id: string, data: Uint8Array): void {
    const v = embeddingFromBytes(data);
    this.#index ??= new EmbeddingIndex(v.length);
    this.#index.add(id, v);
  }

  remove(id: string): void {
    this.#index?.remove(id);
  }

  async best(template: unknown): Promise<{ id: string; score: number } | null> {
    const v = template instanceof Float32Array ? template : template instanceof Uint8Array ? embeddingFromBytes(template) : null;
    if (!v) throw new AgentError('BIOMETRICS_TEMPLATE_MALFORMED', 'an embedding probe must be a Float32Array or embedding-f32 bytes', {});
    if (!this.#index || this.#index.size === 0) return null;
    return this.#index.identify(v, Number.NEGATIVE_INFINITY, 1)[0] ?? null;
  }

  accepts(score: number): boolean {
    return score >= this.#threshold;
  }

  async close(): Promise<void> {}
}
