/** The models check: the extraction models load and turn a synthetic fingerprint into a template. */
import { type CheckResult, fromError, pass, warn } from './check.js';

/**
 * The extraction models load and work: one synthetic fingerprint goes through the whole image
 * path (ONNX enhancement included). Only needed where scanners give images.
 */
export async function checkModels(needed: boolean): Promise<CheckResult> {
  if (!needed) return warn('models', 'not checked: no scanner is configured', 'nothing to do until scanners are added');
  try {
    const { createImageExtractor } = await import('../../biometrics/extract/extractor.js');
    const { renderFingerImage } = await import('../../synthetic/finger-image.js');
    const extractor = await createImageExtractor({ worker: false });
    try {
      const t0 = performance.now();
      const r = await extractor.extract('finger', { ...renderFingerImage(1, 1), dpi: 500 });
      const ms = Math.round(performance.now() - t0);
      return pass(
        'models',
        `extraction models load and work (a synthetic fingerprint: ${r.data.length}-byte template, quality ${r.quality}, ${ms} ms)`,
      );
    } finally {
      await extractor.close();
    }
  } catch (err) {
    return fromError('models', err, 'reinstall the agent (the models/ folder ships with it) or run "npm run models" in a checkout');
  }
}
