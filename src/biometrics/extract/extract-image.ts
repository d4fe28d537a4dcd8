/**
 * One entry point for "this image → that template", used by the CLI, the worker and the daemon:
 * the modality picks the pipeline; the result is the template file's bytes plus a summary.
 *
 * Tested in test/unit/biometrics/extract/extractor.test.ts (both modalities through it, in the
 * worker and in-process) and test/integration/template-extract.test.ts (edge-agent template
 * extract).
 */
import type { BiometricModality } from '../../core/modality.js';
import { encodeIso19794_2 } from '../finger/iso19794-2.js';
import type { GrayImage } from '../image/gray-image.js';
import { encodeIrisTemplate } from '../iris/iris-code.js';
import { extractFinger, type DpiSource, type FingerExtractOptions } from './finger-pipeline.js';
import type { FingerQualityFeatures } from './finger-quality.js';
import { extractIris, type IrisExtractOptions } from './iris-pipeline.js';
import type { IrisQualityFeatures } from './iris-quality.js';

export interface ExtractRequest {
  modality: BiometricModality;
  image: GrayImage;
  finger?: FingerExtractOptions;
  iris?: IrisExtractOptions;
}

export interface ExtractResult {
  modality: BiometricModality;
  /** ISO/IEC 19794-2:2005 record (finger) or iris-code v1 file (iris). */
  template: Uint8Array;
  quality: number;
  /** Minutiae count (finger) or usable code bits (iris). */
  features: number;
  /** Finger: the resolution the image was read at and where it came from (given, the image's, assumed 500). */
  dpi?: number;
  dpiSource?: DpiSource;
  /** The measures the quality score was made of (finger-quality.ts, iris-quality.ts). */
  qualityFeatures?: FingerQualityFeatures | IrisQualityFeatures;
  timings: Record<string, number>;
}

export async function extractTemplate(req: ExtractRequest): Promise<ExtractResult> {
  if (req.modality === 'finger') {
    const r = await extractFinger(req.image, req.finger);
    return {
      modality: 'finger',
      template: encodeIso19794_2(r.template),
      quality: r.template.quality,
      features: r.template.minutiae.length,
      dpi: r.dpi,
      dpiSource: r.dpiSource,
      qualityFeatures: r.qualityFeatures,
      timings: r.timings,
    };
  }
  const r = await extractIris(req.image, req.iris);
  return {
    modality: 'iris',
    template: encodeIrisTemplate(r.code),
    quality: r.code.quality,
    features: Math.round(r.validFraction * 2048),
    qualityFeatures: r.qualityFeatures,
    timings: r.timings,
  };
}
