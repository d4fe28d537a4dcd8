/**
 * What every handler of the service needs: the store, shifts, units, limits, the seal.
 *
 * Tested in test/integration/api-contract.test.ts (every handler runs on it, on SQLite and
 * PostgreSQL).
 */
import type { TzOffsetUnit } from '../api/date-time.js';
import { checkEmployeeCode } from '../api/employee-code.js';
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

/** What is wrong with an employee code by the shared rule (src/api/employee-code.ts), or null; codes are stored in NFC. */
export function employeeCodeProblem(v: unknown): string | null {
  const r = checkEmployeeCode(v);
  if (!r.ok) return r.problem;
  return r.code === v ? null : 'the employee code is not in Unicode NFC';
}

export function isValidEmployeeCode(v: unknown): v is string {
  return employeeCodeProblem(v) === null;
}
