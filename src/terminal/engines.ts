/**
 * What the terminal's domain needs from the biometric engines, as interfaces: the daemon wires
 * the real ones (onnxruntime extraction in a worker, the embedding model) and tests pass their own.
 */
import type { CapturedImage } from '../../drivers/scanner.js';
import type { BiometricModality } from '../core/modality.js';
import type { TemplateFormat } from '../store/template-cache.js';

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
