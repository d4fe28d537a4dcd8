/**
 * The iris index as the identifier sees it: iris-code-v1 templates, scored by the normalized
 * Hamming distance (lower is better). The best template is accepted at or below the distance the
 * gallery's size allows (iris-decision.ts: the chance a stranger comes that close to one of N
 * templates at most `fpir`), never above the configured threshold.
 */
import { decodeIrisTemplate, type IrisCode } from '../iris/iris-code.js';
import { DEFAULT_IRIS_FPIR, irisIdentificationThreshold } from '../iris/iris-decision.js';
import { IrisIndex, type IrisIndexOptions } from '../iris/iris-index.js';
import type { SnapshotLoad, SnapshotPart } from '../snapshot-part.js';
import type { ModalityMatcher } from './modality-matcher.js';

export class IrisMatcher implements ModalityMatcher {
  readonly modality = 'iris' as const;
  readonly formats = ['iris-code-v1'] as const;
  readonly index: IrisIndex;
  /** The configured threshold (`biometrics.irisThreshold`): the ceiling, what a one-template gallery accepts. */
  readonly threshold: number;
  /** The chance a stranger's search is accepted (`biometrics.irisFpir`). */
  readonly fpir: number;

  constructor(threshold: number, options: IrisIndexOptions & { fpir?: number } = {}) {
    const { fpir = DEFAULT_IRIS_FPIR, ...index } = options;
    this.threshold = threshold;
    this.fpir = fpir;
    irisIdentificationThreshold(threshold, 1, fpir); // a bad fpir fails here, not at the first search
    this.index = new IrisIndex(index);
  }

  /** The largest distance a search accepts at the gallery's present size. */
  get acceptAt(): number {
    return irisIdentificationThreshold(this.threshold, this.index.size, this.fpir);
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
    return score <= this.acceptAt;
  }

  close(): Promise<void> {
    return this.index.close();
  }
}
