/**
 * 1:N identification for the daemon: in-memory indexes built once from the template cache and
 * kept up to date from its change events (no rebuild when a person is enrolled or deleted).
 *
 * `identify({modality, template})` answers `{employeeCode, modality, score, decision}` with the
 * matcher's own score: for irises the normalized Hamming distance (lower is better, accepted at
 * or below `biometrics.irisThreshold`), for fingers the calibrated score ≈ −10·log10 FMR (higher
 * is better, accepted at or above `biometrics.fingerThreshold`). A reject carries no employee.
 * Latency percentiles per modality feed the metrics.
 */
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { decodeIrisTemplate, type IrisCode } from '../biometrics/iris/iris-code.js';
import type { FingerTemplate } from '../biometrics/finger/template.js';
import { IrisIndex, type IrisIndexOptions } from '../biometrics/iris/iris-index.js';
import type { Modality, StoredTemplate, TemplateCache } from '../store/template-cache.js';
import type { AgentConfig } from '../config/config.js';
import { LatencyWindow } from './latency.js';

const log = logger('agent:identifier');

export type Decision = 'accept' | 'reject';

export interface IdentifyRequest {
  modality: Modality;
  /** Template bytes in the modality's standard format, or an already decoded template; for a badge, the card read (credentials.ts). */
  template: Uint8Array | IrisCode | FingerTemplate | { credential: string };
}

export interface Identification {
  /** The person, when accepted; null on a reject. */
  employeeCode: string | null;
  modality: Modality;
  /** The best candidate's score (null when the gallery is empty). */
  score: number | null;
  decision: Decision;
  /** The matched template, when accepted. */
  templateId: string | null;
  /** Time spent matching, in milliseconds. */
  ms: number;
}

/** One modality's matcher as the identifier sees it. */
export interface ModalityMatcher {
  readonly modality: Modality;
  /** Formats this matcher can index. */
  readonly formats: readonly string[];
  readonly size: number;
  /** Decodes and adds (or replaces) a stored template. */
  add(id: string, data: Uint8Array, format: string): void;
  remove(id: string): void;
  /** The best candidate by score (whatever its score), or null when the gallery is empty. */
  best(template: unknown): Promise<{ id: string; score: number } | null>;
  accepts(score: number): boolean;
  close(): Promise<void>;
}

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

export interface IdentifierMetrics {
  modality: Modality;
  templates: number;
  identifications: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface IdentifierOptions {
  biometrics: Pick<AgentConfig['biometrics'], 'fingerThreshold' | 'irisThreshold' | 'irisShiftRange'>;
  iris?: Omit<IrisIndexOptions, 'shiftRange'>;
  /** More matchers, or replacements by modality (built in: iris; the finger matcher is
   * `FingerMatcher` of biometric-engines.ts and the badge matcher `BadgeMatcher` of
   * credentials.ts, passed in by the agent). */
  matchers?: ModalityMatcher[];
}

export class Identifier {
  readonly #cache: TemplateCache;
  readonly #matchers = new Map<Modality, ModalityMatcher>();
  readonly #owner = new Map<string, { employeeCode: string; modality: Modality }>();
  readonly #latency = new Map<Modality, LatencyWindow>();
  readonly #counts = new Map<Modality, number>();
  #skipped = 0;
  readonly #onAdded = (t: StoredTemplate) => this.#add(t);
  readonly #onRemoved = (r: { id: string }) => this.#remove(r.id);

  private constructor(cache: TemplateCache, matchers: ModalityMatcher[]) {
    this.#cache = cache;
    for (const m of matchers) {
      this.#matchers.set(m.modality, m);
      this.#latency.set(m.modality, new LatencyWindow());
      this.#counts.set(m.modality, 0);
    }
  }

  /** Builds every index from the cache once, then follows the cache's changes. */
  static async build(cache: TemplateCache, options: IdentifierOptions): Promise<Identifier> {
    const matchers = new Map<Modality, ModalityMatcher>();
    matchers.set('iris', new IrisMatcher(options.biometrics.irisThreshold, { ...options.iris, shiftRange: options.biometrics.irisShiftRange }));
    for (const m of options.matchers ?? []) matchers.set(m.modality, m);
    const id = new Identifier(cache, [...matchers.values()]);
    // Subscribe first: a change during the build is applied on top (add replaces, remove is idempotent).
    cache.on('added', id.#onAdded);
    cache.on('removed', id.#onRemoved);
    for (const m of matchers.values()) {
      for await (const t of cache.listTemplates({ modality: m.modality, onCorrupt: (err) => id.#corrupt(err) })) id.#add(t);
    }
    log.info({ counts: Object.fromEntries([...matchers.values()].map((m) => [m.modality, m.size])), skipped: id.#skipped }, 'identification indexes built');
    return id;
  }

  #add(t: StoredTemplate): void {
    const m = this.#matchers.get(t.modality);
    if (!m) return;
    if (!m.formats.includes(t.format)) {
      this.#skipped++;
      return;
    }
    try {
      m.add(t.id, t.data, t.format);
      this.#owner.set(t.id, { employeeCode: t.employeeCode, modality: t.modality });
    } catch (err) {
      this.#skipped++;
      log.error({ id: t.id, employeeCode: t.employeeCode, err: err instanceof AgentError ? err.toJSON() : String(err) }, 'template not indexed: it does not decode');
    }
  }

  #corrupt(err: AgentError): void {
    this.#skipped++;
    log.error({ err: err.toJSON() }, 'template not indexed: it does not decrypt');
  }

  #remove(id: string): void {
    const owner = this.#owner.get(id);
    if (!owner) return;
    this.#matchers.get(owner.modality)?.remove(id);
    this.#owner.delete(id);
  }

  /** Templates that are stored but not indexed (formats only a module can match, undecodable). */
  get skipped(): number {
    return this.#skipped;
  }

  size(modality: Modality): number {
    return this.#matchers.get(modality)?.size ?? 0;
  }

  async identify(request: IdentifyRequest): Promise<Identification> {
    const m = this.#matchers.get(request.modality);
    if (!m) {
      throw new AgentError('BIOMETRICS_MODALITY_UNSUPPORTED', `no ${request.modality} matcher in this agent`, { modality: request.modality }, { hint: 'identify with a finger or iris template' });
    }
    const t0 = performance.now();
    const best = await m.best(request.template);
    const ms = performance.now() - t0;
    this.#latency.get(m.modality)!.add(ms);
    this.#counts.set(m.modality, this.#counts.get(m.modality)! + 1);
    const accepted = best !== null && m.accepts(best.score);
    return {
      employeeCode: accepted ? this.#owner.get(best.id)!.employeeCode : null,
      modality: m.modality,
      score: best?.score ?? null,
      decision: accepted ? 'accept' : 'reject',
      templateId: accepted ? best.id : null,
      ms,
    };
  }

  metrics(): IdentifierMetrics[] {
    return [...this.#matchers.values()].map((m) => {
      const w = this.#latency.get(m.modality)!;
      return { modality: m.modality, templates: m.size, identifications: this.#counts.get(m.modality)!, p50Ms: w.percentile(50), p95Ms: w.percentile(95) };
    });
  }

  async close(): Promise<void> {
    this.#cache.off('added', this.#onAdded);
    this.#cache.off('removed', this.#onRemoved);
    for (const m of this.#matchers.values()) await m.close();
  }
}
