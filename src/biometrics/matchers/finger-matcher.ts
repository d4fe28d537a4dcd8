/**
 * The fingerprint index as the identifier sees it: ISO/IEC 19794-2 (and ANSI 378) templates,
 * scored ≈ −10·log10 FMR (higher is better) and decided by person (`decide`: identify-person.ts,
 * the prefilter, the matcher and the 1:N decision, the configured threshold as its floor).
 */
import { AgentError } from '../../core/errors.js';
import { DEFAULT_FINGER_DECISION, type FingerDecisionPolicy } from '../finger/decision.js';
import { identifyAmong, identifyPerson, secondFingerBetween } from '../finger/identify-person.js';
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
  /**
   * The 1:N decision: the defaults of decision.ts with the configured floor. With `secondFinger`
   * (the terminal's policy.secondFinger) a finger that leaves two persons close, or one not sure
   * enough, answers with the persons to tell apart (`between`) instead of a plain reject.
   */
  readonly policy: FingerDecisionPolicy;

  constructor(threshold: number, options: { secondFinger?: boolean } = {}) {
    this.#threshold = threshold;
    this.policy = { ...DEFAULT_FINGER_DECISION, threshold, secondFinger: options.secondFinger ?? false };
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
    const probe = fingerProbe(template);
    if (this.index.size === 0) return null;
    return this.index.identify(probe, { threshold: Number.NEGATIVE_INFINITY })[0] ?? null;
  }

  async decide(
    template: unknown,
    personOf: (templateId: string) => string | null,
  ): Promise<{ templateId: string | null; score: number | null; between?: string[] }> {
    const probe = fingerProbe(template);
    if (this.index.size === 0) return { templateId: null, score: null };
    // One finger: each template is its own position for the fusion (any finger, any capture of the person).
    const ownerOf = (id: string) => {
      const person = personOf(id);
      return person === null ? null : { person, position: id };
    };
    const r = identifyPerson(probe, { index: this.index, ownerOf }, this.policy);
    const score = r.candidates[0]?.score ?? null;
    if (r.decision !== 'ask-second-finger') return { templateId: r.templateId, score };
    return { templateId: null, score, between: secondFingerBetween(r) };
  }

  async decideAmong(
    templates: readonly unknown[],
    owners: ReadonlyMap<string, { person: string; position: string }>,
    personOf: (templateId: string) => string | null = () => null,
  ): Promise<{ templateId: string | null; score: number | null }> {
    const probes = templates.map(fingerProbe);
    if (this.index.size === 0 || owners.size === 0) return { templateId: null, score: null };
    const byPerson = new Map<string, string[]>();
    for (const [id, o] of owners) byPerson.set(o.person, [...(byPerson.get(o.person) ?? []), id]);
    // Other persons' templates are known by person only: they rank each search's cohort (its normalisation), never a candidate.
    const ownerOf = (id: string) => {
      const own = owners.get(id);
      if (own) return own;
      const person = personOf(id);
      return person === null ? null : { person, position: id };
    };
    const r = identifyAmong(
      probes,
      { index: this.index, ownerOf, templatesOf: (person) => byPerson.get(person) ?? [] },
      [...byPerson.keys()],
      this.policy,
    );
    return { templateId: r.templateId, score: r.candidates[0]?.score ?? null };
  }

  accepts(score: number): boolean {
    return score >= this.#threshold;
  }

  async close(): Promise<void> {}
}

function fingerProbe(template: unknown): FingerTemplate {
  if (template instanceof Uint8Array) return decodeFingerTemplate(template);
  if (template && typeof template === 'object' && Array.isArray((template as FingerTemplate).minutiae)) return template as FingerTemplate;
  throw new AgentError('BIOMETRICS_TEMPLATE_MALFORMED', 'a finger probe must be ISO 19794-2 bytes or a decoded template', {});
}
