/**
 * The biometric engines the agent runs on: image → template extraction (onnxruntime-node models
 * from models/) and the fingerprint matcher for the 1:N index (the iris matcher is built into the
 * identifier).
 */
import { decodeFingerTemplate } from '../biometrics/finger/iso19794-2.js';
import { FingerIndex } from '../biometrics/finger/index.js';
import { DEFAULT_FINGER_DECISION, type FingerDecisionPolicy } from '../biometrics/finger/decision.js';
import { identifyPerson } from '../biometrics/finger/identify-person.js';
import type { FingerTemplate } from '../biometrics/finger/template.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { createImageExtractor } from '../biometrics/extract/extractor.js';
import { EmbeddingIndex, embedImage, embeddingModelConfig } from '../biometrics/extract/embedding-slot.js';
import type { AgentConfig } from '../config/config.js';
import type { ModalityMatcher } from '../terminal/identifier.js';
import type { Embedder, Extractor } from '../terminal/engines.js';
import type { SnapshotLoad, SnapshotPart } from '../biometrics/snapshot-part.js';

const log = logger('agent:biometrics');

/**
 * Image → template in a worker thread that owns the ONNX sessions. A missing or broken model is
 * logged and identification from images is off (serial modules still enrol and search on their
 * own); `edge-agent doctor` says what to do.
 */
export async function createExtractor(_config: AgentConfig): Promise<Extractor | null> {
  try {
    return await createImageExtractor();
  } catch (err) {
    log.error({ err: toAgentError(err).toJSON() }, 'image extraction is off: the models could not be loaded');
    return null;
  }
}

/**
 * The fingerprint index as the identifier sees it: ISO 19794-2 (and ANSI 378) templates, decided
 * by person (`decide`: identify-person.ts, the configured threshold as the floor of the 1:N policy).
 */
export class FingerMatcher implements ModalityMatcher {
  readonly modality = 'finger' as const;
  readonly formats = ['iso19794-2', 'ansi378'] as const;
  readonly index = new FingerIndex();
  readonly #threshold: number;
  /** The 1:N decision: the defaults of decision.ts with the configured floor; one finger per identification (no second-finger step yet). */
  readonly policy: FingerDecisionPolicy;

  constructor(threshold: number) {
    this.#threshold = threshold;
    this.policy = { ...DEFAULT_FINGER_DECISION, threshold, secondFinger: false };
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
  ): Promise<{ templateId: string | null; score: number | null }> {
    const probe = fingerProbe(template);
    if (this.index.size === 0) return { templateId: null, score: null };
    // One finger: a person's templates are its positions for fusion (any position, any capture).
    const r = identifyPerson(probe, { index: this.index, ownerOf: (id) => personAndPosition(id, personOf) }, this.policy);
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

function personAndPosition(
  templateId: string,
  personOf: (templateId: string) => string | null,
): { person: string; position: string } | null {
  const person = personOf(templateId);
  return person === null ? null : { person, position: templateId };
}

export async function createFingerMatcher(config: AgentConfig): Promise<ModalityMatcher | null> {
  return new FingerMatcher(config.biometrics.fingerThreshold);
}

/** An embedding stored in the cache: little-endian float32 values (format `embedding-f32`). */
export function embeddingToBytes(v: Float32Array): Uint8Array {
  const out = new Uint8Array(v.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) view.setFloat32(i * 4, v[i]!, true);
  return out;
}

export function embeddingFromBytes(bytes: Uint8Array): Float32Array {
  if (bytes.length === 0 || bytes.length % 4 !== 0) {
    throw new AgentError(
      'BIOMETRICS_TEMPLATE_MALFORMED',
      `an embedding-f32 template holds whole float32 values; got ${bytes.length} bytes`,
      { offset: bytes.length - (bytes.length % 4) },
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v = new Float32Array(bytes.length / 4);
  for (let i = 0; i < v.length; i++) v[i] = view.getFloat32(i * 4, true);
  return v;
}

/** The embedding slot in the 1:N identifier: cosine similarity, accepted at `threshold` and above. */
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

/** Image → embedding with the configured model (the embedding slot), or null when none is configured. */
export function createEmbedder(config: AgentConfig): Embedder | null {
  const e = config.biometrics.embedding;
  if (!e) return null;
  const cfg = embeddingModelConfig(e);
  return { source: e.source, embed: async (image) => embeddingToBytes(await embedImage(image, cfg)) };
}

export function createEmbeddingMatcher(config: AgentConfig): EmbeddingMatcher | null {
  return config.biometrics.embedding ? new EmbeddingMatcher(config.biometrics.embedding.threshold) : null;
}
