/**
 * The service's routes: the nine operations under /api/attendance/... and /attendance/api/...
 * (the report under the first only). A trailing slash is optional everywhere.
 *
 * Tested in test/integration/api-contract.test.ts (every operation under both path forms, the
 * report only under /api/attendance).
 */
import { lookupEmployeeCode } from '../api/employee-code.js';
import { PATH_PREFIX } from '../api/paths.js';
import type { PathForm } from '../api/types.js';
import { addEvents, deleteEvents, getEvents } from './events.js';
import { deleteBiometrics, updateBiometrics } from './biometrics.js';
import { BadRequest, type HandlerResult } from './envelope.js';
import type { ServiceContext } from './context.js';
import { workHourReport } from './report.js';
import { addOrUpdateUser, deleteUser, getUser } from './users.js';

export interface RouteInput {
  code: string;
  query: URLSearchParams;
  body: unknown;
}

export interface Route {
  operation: string;
  /** Writes need the admin role. */
  write: boolean;
  /** The request carries a JSON body. */
  body: boolean;
  run(ctx: ServiceContext, input: RouteInput): Promise<HandlerResult>;
}

type Table = Record<string, Route>;

/** `?code=` as a lookup key (NFC, as codes are stored). */
function lookupQuery(query: URLSearchParams): string | null {
  const code = query.get('code');
  return code === null ? null : lookupEmployeeCode(code);
}

const USER: Table = {
  GET: { operation: 'getUser', write: false, body: false, run: (ctx, i) => getUser(ctx, lookupQuery(i.query)) },
  POST: { operation: 'addOrUpdateUser', write: true, body: true, run: (ctx, i) => addOrUpdateUser(ctx, i.body) },
};
const USER_CODE: Table = { DELETE: { operation: 'deleteUser', write: true, body: false, run: (ctx, i) => deleteUser(ctx, i.code) } };
const BIOMETRIC_CODE: Table = {
  POST: { operation: 'updateBiometrics', write: true, body: true, run: (ctx, i) => updateBiometrics(ctx, i.code, i.body) },
  DELETE: { operation: 'deleteBiometrics', write: true, body: false, run: (ctx, i) => deleteBiometrics(ctx, i.code) },
};
const EVENT: Table = {
  GET: { operation: 'getEvents', write: false, body: false, run: (ctx, i) => getEvents(ctx, i.query) },
  POST: { operation: 'addEvents', write: true, body: true, run: (ctx, i) => addEvents(ctx, i.body) },
};
const EVENT_CODE: Table = {
  DELETE: { operation: 'deleteEvents', write: true, body: true, run: (ctx, i) => deleteEvents(ctx, i.code, i.body) },
};
const REPORT: Table = { GET: { operation: 'workHourReport', write: false, body: false, run: (ctx, i) => workHourReport(ctx, i.query) } };

/** The routes of a path: `undefined` for an unknown path; with `code` when the path carries one. */
export function matchPath(pathname: string): { table: Table; code: string; form: PathForm } | undefined {
  const trimmed = pathname.replace(/\/+$/, '');
  for (const form of ['api', 'attendance'] as PathForm[]) {
    const prefix = `${PATH_PREFIX[form]}/`;
    if (!trimmed.startsWith(prefix)) continue;
    const segs = trimmed.slice(prefix.length).split('/');
    let code = '';
    if (segs.length === 2 && segs[0] !== 'report') {
      try {
        code = lookupEmployeeCode(decodeURIComponent(segs[1]!));
      } catch {
        throw new BadRequest(`the employee code in the path is not valid percent-encoding: "${segs[1]}"`);
      }
      if (code === '') return undefined;
    }
    const key = segs.length === 2 && segs[0] !== 'report' ? `${segs[0]}/:code` : segs.join('/');
    const table = (
      {
        user: USER,
        'user/:code': USER_CODE,
        'biometric/:code': BIOMETRIC_CODE,
        event: EVENT,
        'event/:code': EVENT_CODE,
        'report/workhour': form === 'api' ? REPORT : undefined,
      } as Record<string, Table | undefined>
    )[key];
    return table ? { table, code, form } : undefined;
  }
  return undefined;
}
