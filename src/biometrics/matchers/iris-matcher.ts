/**
 * The iris index as the identifier sees it: iris-code-v1 templates, scored by the normalized
 * Hamming distance (lower is better), accepted at or below the threshold.
 */
import { decodeIrisTemplate, type IrisCode } from '../iris/iris-code.js';
import { IrisIndex, type IrisIndexOptions } from '../iris/iris-index.js';
import type { SnapshotLoad, SnapshotPart } from '../snapshot-part.js';
import type { ModalityMatcher } from './modality-matcher.js';

export class IrisMatcher implements ModalityMatcher {
  readonly modality = 'iris' as const;
  readonly formats = ['iris-code-v1'] as const;
  readonly index: IrisIndex;
  readonly threshold: number;

  constructor(threshold: number, options: IrisIndexOptions = {}) {
    this.threshold = threshold;
    this.index = new IrisIndex(options);
  }

  get size(): number {
    return this.index.size;
  }

  add(id: string, data: Uint8Array): void {
    this.index.add(id, decodeIrisTemplate(data));
  }

  remove(id: string): void {
    this.index.remove(id);
  }

  snapshot(): SnapshotPart & { ids: readonly string[] } {
    return { ...this.index.snapshot(), ids: this.index.ids };
  }

  loadSnapshot(meta: Record<string, unknown>): (SnapshotLoad & { ids: () => readonly string[] }) | string {
    const load = this.index.loadSnapshot(meta);
    return typeof load === 'string' ? load : { ...load, ids: () => this.index.ids };
  }

  holds(id: string, data: Uint8Array): boolean {
    return this.index.holds(id, decodeIrisTemplate(data));
  }

  clear(): void {
    this.index.clear();
  }

  async best(template: unknown): Promise<{ id: string; score: number } | null> {
    const probe = template instanceof Uint8Array ? decodeIrisTemplate(template) : (template as IrisCode);
    const [top] = await this.index.identify(probe, { threshold: 1, candidates: 1 });
    return top ? { id: top.id, score: top.hd } : null;
  }

  accepts(score: number): boolean {
    return score <= this.threshold;
  }

  close(): Promise<void> {
    return this.index.close();
  }
}
