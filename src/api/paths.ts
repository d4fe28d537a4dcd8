/**
 * The paths of the nine operations under both forms of section 9. The report exists only under
 * the `api` form (/api/attendance/...). Shared by the client and the service.
 */
import type { PathForm } from './types.js';

export const PATH_PREFIX: Record<PathForm, string> = {
  api: '/api/attendance',
  attendance: '/attendance/api',
};

export const TOKEN_PATH = '/oauth/token';

const enc = (code: string) => encodeURIComponent(code);

export function apiPaths(form: PathForm) {
  const p = PATH_PREFIX[form];
  return {
    user: `${p}/user`,
    userByCode: (code: string) => `${p}/user/${enc(code)}/`,
    biometric: (code: string) => `${p}/biometric/${enc(code)}/`,
    event: `${p}/event`,
    eventByCode: (code: string) => `${p}/event/${enc(code)}/`,
    /** Undefined under the `attendance` form: the document lists the report under `api` only. */
    workHourReport: form === 'api' ? `${p}/report/workhour` : undefined,
  };
}
