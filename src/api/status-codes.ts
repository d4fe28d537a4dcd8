/**
 * The status codes of section 7 of the attendance API, as the exact strings the service sends
 * (`Last_NAME_EMPTY` keeps its odd casing). They travel inside the envelope's `statusCode`.
 *
 * Two extension codes (`UNAUTHORIZED`, `FORBIDDEN`) are used by our service for a missing or bad
 * token and for a write by a read-only key, where the document shows no response at all.
 */
export const STATUS_CODES = [
  'SUCCESS',
  'ERROR',
  'INVALID_EMAIL',
  'FIRST_NAME_EMPTY',
  'Last_NAME_EMPTY',
  'INVALID_EMPCODE',
  'USER_NOT_AVAILABLE',
  'INVALID_PARAMETERS',
  'FAILED_TO_EXTRACT',
  'BIOMETRIC_TYPE_NOT_SUPPORTED',
  'ENROLLMENT_ERROR',
  'INVALID_TIME_FORMAT',
] as const;

/** Codes of our service outside section 7 (documented in docs/integrator.md). */
export const EXTENSION_STATUS_CODES = ['UNAUTHORIZED', 'FORBIDDEN'] as const;

export function isStatusCode(value: unknown): value is (typeof STATUS_CODES)[number] {
  return typeof value === 'string' && (STATUS_CODES as readonly string[]).includes(value);
}

/** The codes each operation may answer with, top level and per item (section 7). */
export const OPERATION_STATUS_CODES = {
  addOrUpdateUser: { top: ['SUCCESS', 'ERROR', 'INVALID_EMAIL', 'FIRST_NAME_EMPTY', 'Last_NAME_EMPTY', 'INVALID_EMPCODE'], item: [] },
  deleteUser: { top: ['SUCCESS', 'ERROR', 'USER_NOT_AVAILABLE'], item: [] },
  getUser: { top: ['SUCCESS', 'ERROR', 'USER_NOT_AVAILABLE'], item: [] },
  updateBiometrics: {
    top: [
      'SUCCESS',
      'ERROR',
      'INVALID_PARAMETERS',
      'USER_NOT_AVAILABLE',
      'FAILED_TO_EXTRACT',
      'BIOMETRIC_TYPE_NOT_SUPPORTED',
      'ENROLLMENT_ERROR',
    ],
    item: [
      'SUCCESS',
      'ERROR',
      'INVALID_PARAMETERS',
      'USER_NOT_AVAILABLE',
      'FAILED_TO_EXTRACT',
      'BIOMETRIC_TYPE_NOT_SUPPORTED',
      'ENROLLMENT_ERROR',
    ],
  },
  deleteBiometrics: { top: ['SUCCESS', 'ERROR', 'USER_NOT_AVAILABLE'], item: [] },
  addEvents: {
    top: ['SUCCESS', 'ERROR', 'INVALID_PARAMETERS', 'USER_NOT_AVAILABLE'],
    item: ['SUCCESS', 'ERROR', 'INVALID_PARAMETERS', 'USER_NOT_AVAILABLE'],
  },
  deleteEvents: {
    top: ['SUCCESS', 'ERROR', 'INVALID_PARAMETERS', 'USER_NOT_AVAILABLE'],
    item: ['SUCCESS', 'ERROR', 'INVALID_PARAMETERS', 'USER_NOT_AVAILABLE'],
  },
  getEvents: {
    top: ['SUCCESS', 'ERROR', 'USER_NOT_AVAILABLE', 'INVALID_TIME_FORMAT'],
    item: ['SUCCESS', 'ERROR', 'USER_NOT_AVAILABLE', 'INVALID_TIME_FORMAT'],
  },
  workHourReport: { top: ['SUCCESS', 'ERROR', 'INVALID_PARAMETERS'], item: [] },
} as const;
