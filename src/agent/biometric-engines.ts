/**
 * The biometric engines the agent runs on: image → template extraction (onnxruntime-node models
 * from models/) and the fingerprint matcher for the 1:N index (the iris matcher is built into the
 * identifier).
 */
import { decodeFingerTemplate } from '../biometrics/finger/iso19794-2.js';
import { FingerIndex } from '../biometrics/finger/index.js';
import type { FingerTemplate } from '../biometrics/finger/template.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { createImageExtractor } from '../biometrics/extract/extractor.js';
import type { AgentConfig } from './config.js';
import type { ModalityMatcher } from './identifier.js';
import type { Extractor } from './terminal-runtime.js';

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

/** The fingerprint index as the identifier sees it: ISO 19794-2 (and ANSI 378) templates. */
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

  async best(template: unknown): Promise<{ id: string; score: number } | null> {
    let probe: FingerTemplate;
    if (template instanceof Uint8Array) probe = decodeFingerTemplate(template);
    else if (template && typeof template === 'object' && Array.isArray((template as FingerTemplate).minutiae)) probe = template as FingerTemplate;
    else throw new AgentError('BIOMETRICS_TEMPLATE_MALFORMED', 'a finger probe must be ISO 19794-2 bytes or a decoded template', {});
    if (this.index.size === 0) return null;
    return this.index.identify(probe, { threshold: Number.NEGATIVE_INFINITY })[0] ?? null;
  }

  accepts(score: number): boolean {
    return score >= this.#threshold;
  }

  async close(): Promise<void> {}
}

export async function createFingerMatcher(config: AgentConfig): Promise<ModalityMatcher | null> {
  return new FingerMatcher(config.biometrics.fingerThreshold);
}
