/** What every handler of the service needs: the store, shifts, units, limits, the seal. */
import type { TzOffsetUnit } from '../api/date-time.js';
import type { BiometricSeal } from './biometric-seal.js';
import type { Shifts } from './shifts.js';
import type { ServiceStore } from './store/store.js';

/** The documented limits of the service (docs/integrator.md, Limits). */
export interface ServiceLimits {
  maxBodyBytes: number;
  maxEventsPerRequest: number;
  maxBiometricItemsPerRequest: number;
  maxEventsReturned: number;
  defaultPageSize: number;
  maxPageSize: number;
  /** Biometric records kept per user and modality. */
  maxRecordsPerModality: number;
}

export const DEFAULT_LIMITS: ServiceLimits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxEventsPerRequest: 5000,
  maxBiometricItemsPerRequest: 20,
  maxEventsReturned: 10_000,
  defaultPageSize: 100,
  maxPageSize: 1000,
  maxRecordsPerModality: 10,
};

/** Field length limits, in characters. */
export const FIELD_LIMITS = {
  employeeCode: 64,
  firstName: 100,
  lastName: 100,
  email: 254,
  loginName: 100,
  password: 256,
  groupCode: 64,
  shift: 64,
} as const;

export interface ServiceContext {
  /** SQLite or PostgreSQL (store/store.ts). */
  store: ServiceStore;
  shifts: Shifts;
  tzOffsetUnit: TzOffsetUnit;
  seal: BiometricSeal;
  limits: ServiceLimits;
}

/** Employee codes: 1–64 characters, no whitespace, control characters, `/`, `\`, `?`, `#` or `%`. */
export function isValidEmployeeCode(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= FIELD_LIMITS.employeeCode && !/[\s/\\?#%\u0000-\u001f\u007f]/.test(v);
}
