/**
 * The biometrics' codes (`BIOMETRICS_…`): templates, models, extraction, matching.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const BIOMETRICS_CODES = layerCodes('biometrics', {
  BIOMETRICS_BAD_IMAGE: {
    retryable: false,
    hint: 'give an 8-bit grayscale PGM or PNG image of the size the scanner produces',
  },
  BIOMETRICS_BAD_MODALITY: { retryable: false, hint: "use 'finger' or 'iris'" },
  BIOMETRICS_EXTRACTOR_CLOSED: { retryable: false, hint: 'create a new extractor' },
  BIOMETRICS_EXTRACT_FAILED: {
    retryable: true,
    hint: 'the next request starts a new worker; if it keeps failing, check the models in models/',
  },
  BIOMETRICS_INDEX_CLOSED: { retryable: false, hint: 'the identifier was stopped; restart the agent' },
  BIOMETRICS_MODALITY_MISMATCH: { retryable: false, hint: 'compare two finger templates or two iris templates' },
  BIOMETRICS_MODALITY_UNSUPPORTED: { retryable: false, hint: 'identify with a finger or iris template' },
  BIOMETRICS_MODEL_INVALID: {
    retryable: false,
    hint: 'rebuild the bundled models with "npm run models" or fix the configured model and its tensor names',
  },
  BIOMETRICS_MODEL_MISSING: {
    retryable: false,
    hint: 'run "npm run models" to build the bundled models, or fix the configured model path',
  },
  BIOMETRICS_TEMPLATE_INVALID: {
    retryable: false,
    hint: 'the template does not fit the configured engine: enrol the person again',
  },
  BIOMETRICS_TEMPLATE_MALFORMED: {
    retryable: false,
    hint: 'the template is damaged or of another format: extract or enrol it again',
  },
  BIOMETRICS_TEMPLATE_UNKNOWN_FORMAT: {
    retryable: false,
    hint: 'give an ISO/IEC 19794-2, ANSI INCITS 378 or iris-code-v1 template',
  },
  BIOMETRICS_UNUSABLE_CAPTURE: {
    retryable: false,
    hint: 'capture again: the finger flat on the sensor, or the eye open and straight at the camera',
  },
});
