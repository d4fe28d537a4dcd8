/**
 * The fingerprint index as the identifier sees it: ISO/IEC 19794-2 (and ANSI 378) templates,
 * scored ≈ −10·log10 FMR (higher is better), accepted at or above the threshold.
 */
import { AgentError } from '../../core/errors.js';
import { FingerIndex } from '../finger/index.js';
import { decodeFingerTemplate } from '../finger/iso19794-2.js';
import type { FingerTemplate } from '../finger/template.js';
import type { SnapshotLoad, SnapshotPart } from '../snapshot-part.js';
import type { ModalityMatcher } from './modality-matcher.js';

export class FingerMatcher implements ModalityMatcher {
  readonly modality = 'finger' as const;
  readonly formats = ['iso19794-2', 'ansi378'] as const;
  readonly index = new FingerIndex();
  readonly #threshold: number;

  constructor(threshold: number) {
    this.#threshold = threshold;
  }

  get size(): number {
    return this.index.size;
  }

  add(id: string, data: Uint8Array): void {
    this.index.add(id, decodeFingerTemplate(data));
  }

  remove(id: string): void {
    this.index.remove(id);
  }

  snapshot(): SnapshotPart & { ids: readonly string[] } {
    const part = this.index.snapshot(); // compacts: every slot holds an id
    return { ...part, ids: this.index.slotIds as readonly string[] };
  }

  loadSnapshot(meta: Record<string, unknown>): (SnapshotLoad & { ids: () => readonly string[] }) | string {
    const load = this.index.loadSnapshot(meta);
    return typeof load === 'string' ? load : { ...load, ids: () => this.index.slotIds as readonly string[] };
  }

  holds(id: string, data: Uint8Array): boolean {
    return this.index.holds(id, decodeFingerTemplate(data));
  }

  clear(): void {
    this.index.clear();
  }

  async best(template: unknown): Promise<{ id: string; score: number } | null> {
    let probe: FingerTemplate;
    if (template instanceof Uint8Array) probe = decodeFingerTemplate(template);
    else if (template && typeof template === 'object' && Array.isArray((template as FingerTemplate).minutiae))
      probe = template as FingerTemplate;
    else throw new AgentError('BIOMETRICS_TEMPLATE_MALFORMED', 'a finger probe must be ISO 19794-2 bytes or a decoded template', {});
    if (this.index.size === 0) return null;
    return this.index.identify(probe, { threshold: Number.NEGATIVE_INFINITY })[0] ?? null;
  }

  accepts(score: number): boolean {
    return score >= this.#threshold;
  }

  async close(): Promise<void> {}
}
