/**
 * The resources of the attendance API (section 2 of the contract), as the client hands them to
 * callers. Normalizers in `normalize.ts` turn what real servers send (`shiftName`, a bare-number
 * `status`, the report's alternative names) into these shapes.
 *
 * Tested in test/unit/api/normalize.test.ts (what real servers send, read into these shapes; the
 * report's durations) and test/integration/api-contract.test.ts (the service's answers in these
 * shapes).
 */
export type { TzOffsetUnit } from './date-time.js';

export type StatusCode =
  | 'SUCCESS'
  | 'ERROR'
  | 'INVALID_EMAIL'
  | 'FIRST_NAME_EMPTY'
  | 'Last_NAME_EMPTY'
  | 'INVALID_EMPCODE'
  | 'USER_NOT_AVAILABLE'
  | 'INVALID_PARAMETERS'
  | 'FAILED_TO_EXTRACT'
  | 'BIOMETRIC_TYPE_NOT_SUPPORTED'
  | 'ENROLLMENT_ERROR'
  | 'INVALID_TIME_FORMAT';

/** Every answer of the service (2.1). `returnValue` is filled only on SUCCESS. */
export interface Envelope<T> {
  statusCode: StatusCode | string;
  statusDescription?: string;
  returnValue: T | null;
}

/** 2.2. `status`: 0 = Active, 1 = Disabled, as a string or a bare number. */
export interface User {
  employeeCode: string;
  firstName: string;
  lastName: string;
  email?: string;
  loginName?: string;
  password?: string;
  status?: string | number;
  /** Extension of our service: the group the report's `groupcodes` filter selects. */
  groupCode?: string;
}

/** 2.3. `image` and `template` are base64 text; one of them is required. `modality`: one of API_MODALITIES (src/core/modality.ts). */
export interface BiometricItem {
  modality: string;
  image?: string | null;
  template?: string | null;
}

/**
 * 2.4. Times are `yyyy-MM-dd HH:mm:ss` local wall-clock. Through `AttendanceClient`, `tzOffset` is
 * always in minutes east of UTC; the client converts to and from the configured wire unit.
 */
export interface AttendanceEvent {
  employeeCode: string;
  inTime?: string | null;
  outTime?: string | null;
  shift?: string | null;
  tzOffset?: number;
}

/** 2.5, with the alternative names of the interface's field table folded in. Durations in minutes. */
export interface WorkHourRow {
  employeeCode: string;
  firstName: string;
  lastName?: string;
  customdata?: Record<string, unknown>;
  shiftHours: number;
  shiftWorkHours: number;
  workHours: number;
  inOuttime: number;
  productiveHours: number;
  productiveWorkHours: number;
  overtime: number;
  earlyArrival: number;
  lateArrival: number;
  earlyDepature: number;
  lateDepature: number;
  totalUnProductiveHours: number;
  actualBreakHours: number;
  firstCheckin: string | null;
  lastCheckout: string | null;
  tzOffset: number;
}

/** The duration fields of a report row, in the order of section 2.5. */
export const WORK_HOUR_DURATIONS = [
  'shiftHours',
  'shiftWorkHours',
  'workHours',
  'inOuttime',
  'productiveHours',
  'productiveWorkHours',
  'overtime',
  'earlyArrival',
  'lateArrival',
  'earlyDepature',
  'lateDepature',
  'totalUnProductiveHours',
  'actualBreakHours',
] as const;
export type WorkHourDuration = (typeof WORK_HOUR_DURATIONS)[number];

export type GroupType = 'DAILY' | 'WEEKLY' | 'MONTHLY';
export const GROUP_TYPES: readonly GroupType[] = ['DAILY', 'WEEKLY', 'MONTHLY'];

export interface WorkHourQuery {
  from: string;
  to: string;
  grouptype?: GroupType;
  groupcodes?: string[];
  shiftname?: string;
  pagenumber?: number;
  pagesize?: number;
}

/** The two path forms of section 9: `api` = /api/attendance/..., `attendance` = /attendance/api/... */
export type PathForm = 'api' | 'attendance';
