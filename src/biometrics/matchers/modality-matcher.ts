/**
 * One modality's 1:N matcher as the identifier (src/terminal/identifier.ts) sees it: the
 * adapters beside this file wrap the indexes of src/biometrics (fingers, irises, embeddings) and
 * the terminal adds its badge matcher (src/terminal/credentials.ts).
 *
 * Types only. Tested in test/unit/biometrics/matchers/finger-matcher.test.ts,
 * test/unit/biometrics/matchers/iris-matcher.test.ts and
 * test/unit/biometrics/matchers/embedding-matcher.test.ts (the adapters behind it).
 */
import type { TemplateModality } from '../../core/modality.js';
import type { SnapshotLoad, SnapshotPart } from '../snapshot-part.js';

export interface ModalityMatcher {
  readonly modality: TemplateModality;
  /** Formats this matcher can index. */
  readonly formats: readonly string[];
  readonly size: number;
  /** Decodes and adds (or replaces) a stored template. */
  add(id: string, data: Uint8Array, format: string): void;
  remove(id: string): void;
  /** Index state for a snapshot, the ids in slot order first (a matcher without it is built from the cache). */
  snapshot?(): SnapshotPart & { ids: readonly string[] };
  /** Takes a snapshot's state (into an empty index), or a reason why it does not fit. */
  loadSnapshot?(meta: Record<string, unknown>): (SnapshotLoad & { ids: () => readonly string[] }) | string;
  /** True when the index holds this stored template as it would index it now. */
  holds?(id: string, data: Uint8Array): boolean;
  /** Empties the index. */
  clear?(): void;
  /** The best candidate by score (whatever its score), or null when the gallery is empty. */
  best(template: unknown): Promise<{ id: string; score: number } | null>;
  accepts(score: number): boolean;
  /** The score `accepts` needs at the gallery's present size, when that moves with the size (irises). */
  readonly acceptAt?: number;
  /**
   * The 1:N decision on persons, when the matcher takes it itself (fingers: identify-person.ts,
   * which weighs the gallery's size and the second-best person): the accepted template (null on
   * a reject) and the best person's score (null when the gallery is empty). Without it the
   * identifier takes the best template and `accepts` its score.
   */
  decide?(
    template: unknown,
    personOf: (templateId: string) => string | null,
  ): Promise<{ templateId: string | null; score: number | null; between?: string[] }>;
  /**
   * The decision on several captures (fingers: a first one and a second one the terminal asked
   * for), fused by person among the templates of `owners` only (the persons the first capture
   * could not tell apart): the accepted template (null on a reject) and the best person's fused score.
   * `personOf` names the owner of any other template: the rest of the gallery, against which each
   * capture's scores are normalised.
   */
  decideAmong?(
    templates: readonly unknown[],
    owners: ReadonlyMap<string, { person: string; position: string }>,
    personOf?: (templateId: string) => string | null,
  ): Promise<{ templateId: string | null; score: number | null }>;
  close(): Promise<void>;
}
