/**
 * The terminal domain's codes: enrollment (`ENROLL_…`) and the punch policy (`POLICY_…`).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const TERMINAL_CODES = layerCodes('terminal', {
  ENROLL_API_ERROR: { retryable: true, hint: 'check the service logs' },
  ENROLL_BAD_FINGERS: {
    retryable: false,
    hint: 'name each finger once, and ask for 1 to 10 fingers (fingers only: an eye or a badge is one)',
  },
  ENROLL_CANCELLED: {
    retryable: true,
    hint: 'the enrolment was stopped before it finished and nothing was stored: run the command again',
  },
  ENROLL_DUPLICATE: {
    retryable: false,
    hint: 'a person is enrolled once: check who is in front of the scanner, or delete the other enrolment first',
  },
  ENROLL_LOW_QUALITY: {
    retryable: false,
    hint: 'clean the sensor and the finger and press flat, or look straight at the camera; or enrol another finger',
  },
  ENROLL_SAME_FINGER: {
    retryable: true,
    hint: 'each finger of an enrolment is a different finger: place the one the prompt names, then run the command again',
  },
  ENROLL_TIMEOUT: { retryable: true, hint: 'present it when the scanner asks, then run the command again' },
  ENROLL_UNKNOWN_USER: {
    retryable: false,
    hint: 'add the person in the attendance service first (operation 1), then enrol',
  },
  POLICY_BAD_PUNCH: { retryable: false, hint: 'give the employee code and, for a fixed direction, in or out' },
  POLICY_BAD_TIME: { retryable: false, hint: 'write the time as "2026-03-01 07:58:00"' },
});
