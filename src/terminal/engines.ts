/**
 * What the terminal's domain needs from the biometric engines: the interfaces (tests pass their
 * own) and the makers of the real ones, which the daemon's biometrics component calls: image →
 * template extraction (onnxruntime-node models from models/, in a worker thread) and the
 * embedding slot's model (`biometrics.embedding`).
 */
import type { CapturedImage } from '../../drivers/scanner.js';
import { createImageExtractor } from '../biometrics/extract/extractor.js';
import { embedImage, embeddingModelConfig } from '../biometrics/extract/embedding-slot.js';
import { embeddingToBytes } from '../biometrics/matchers/embedding-bytes.js';
import type { AgentConfig } from '../config/config.js';
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { BiometricModality } from '../core/modality.js';
import type { TemplateFormat } from '../store/template-cache.js';

const log = logger('agent:biometrics');

/** Image → standard template (ISO 19794-2 for fingers, iris-code-v1 for irises). */
export interface Extractor {
  extract(modality: BiometricModality, image: CapturedImage): Promise<{ format: TemplateFormat; data: Uint8Array; quality: number }>;
  close(): Promise<void>;
}

/** Image → embedding with the configured model (the embedding slot). */
export interface Embedder {
  source: BiometricModality;
  embed(image: { width: number; height: number; pixels: Uint8Array }): Promise<Uint8Array>;
}

/**
 * Image → template in a worker thread that owns the ONNX sessions. A missing or broken model is
 * logged and identification from images is off (serial modules still enrol and search on their
 * own); `edge-agent doctor` says what to do.
 */
export async function createExtractor(): Promise<Extractor | null> {
  try {
    return await createImageExtractor();
  } catch (err) {
    log.error({ err: toAgentError(err).toJSON() }, 'image extraction is off: the models could not be loaded');
    return null;
  }
}

/** Image → embedding with the configured model (`biometrics.embedding`), or null when none is configured. */
export function createEmbedder(settings: AgentConfig['biometrics']['embedding']): Embedder | null {
  if (!settings) return null;
  const cfg = embeddingModelConfig(settings);
  return { source: settings.source, embed: async (image) => embeddingToBytes(await embedImage(image, cfg)) };
}
