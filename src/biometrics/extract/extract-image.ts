/**
 * One extraction, in whatever thread runs it: an 8-bit image of a finger or an eye → the bytes of
 * a standard template with its quality. The extractor (extractor.ts) runs this in a worker
 * thread; the CLI and tests may call it directly.
 */
import { encodeIso19794_2 } from '../finger/iso19794-2.js';
import { encodeIrisTemplate } from '../iris/iris-code.js';
import { AgentError } from '../../core/errors.js';
import type { GrayImage } from '../image/gray-image.js';
import { extractFinger } from './finger-pipeline.js';
import { extractIrisCode } from './iris-encode.js';

export type Modality = 'finger' | 'iris';

export interface ExtractInput extends GrayImage {
  /** Capture resolution (fingerprints; default 500 dpi). */
  dpi?: number;
}

export interface ExtractedTemplate {
  format: 'iso19794-2' | 'iris-code-v1';
  data: Uint8Array;
  /** 0..100. */
  quality: number;
}

export async function extractImage(modality: Modality, image: ExtractInput): Promise<ExtractedTemplate> {
  if (modality === 'finger') {
    const { template } = await extractFinger(image, image.dpi !== undefined ? { dpi: image.dpi } : {});
    return { format: 'iso19794-2', data: encodeIso19794_2(template), quality: template.quality };
  }
  if (modality === 'iris') {
    const { code, quality } = await extractIrisCode(image);
    return { format: 'iris-code-v1', data: encodeIrisTemplate(code), quality };
  }
  throw new AgentError('BIOMETRICS_BAD_MODALITY', `cannot extract a template for modality '${String(modality)}'`, { modality }, { hint: "use 'finger' or 'iris'" });
}
