/**
 * Operations 1–3: add/update, delete and get a user.
 *
 * Add or update: a user whose employeeCode exists is updated, otherwise added. On update
 * loginName and password are never changed (ignored when sent); a field left out keeps its value,
 * a field sent as null (email, groupCode) is cleared. Passwords are stored scrypt-hashed and
 * returned only in the answer to the request that carried them. A loginName already used by
 * another employee gives INVALID_EMPCODE. Delete removes the user and their biometric records;
 * their attendance events are kept.
 *
 * Tested in test/integration/api-contract.test.ts (operations 1-3: add, update without touching
 * login or password, get, the employee-code rule, delete).
 */
import { normalizeStatus } from '../api/normalize.js';
import type { User } from '../api/types.js';
import { answer, BadRequest, fail, isObject, ok, type HandlerResult } from './envelope.js';
import { EMPLOYEE_CODE_RULE, lookupEmployeeCode } from '../api/employee-code.js';
import { hashSecret } from '../core/secret-hash.js';
import { employeeCodeProblem, FIELD_LIMITS, isValidEmployeeCode, type ServiceContext } from './context.js';
import type { UserRow } from './store/store.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function userFromRow(r: UserRow): User {
  const u: User = { employeeCode: r.employee_code, firstName: r.first_name, lastName: r.last_name };
  if (r.email !== null) u.email = r.email;
  if (r.login_name !== null) u.loginName = r.login_name;
  u.status = r.status;
  if (r.group_code !== null) u.groupCode = r.group_code;
  return u;
}

/** A string field or undefined (absent) or null (cleared); anything else is a bad request. */
function optString(body: Record<string, unknown>, field: keyof typeof FIELD_LIMITS): string | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'string') throw new BadRequest(`${field} must be a string, got ${Array.isArray(v) ? 'an array' : typeof v}`);
  if (v.length > FIELD_LIMITS[field]) throw new BadRequest(`${field} is longer than ${FIELD_LIMITS[field]} characters`);
  return v;
}

export async function addOrUpdateUser(ctx: ServiceContext, body: unknown): Promise<HandlerResult> {
  if (!isObject(body)) throw new BadRequest('the body must be a JSON object (a user)');
  const code = typeof body.employeeCode === 'string' ? lookupEmployeeCode(body.employeeCode) : body.employeeCode;
  if (code !== undefined && code !== null && typeof code !== 'string') throw new BadRequest('employeeCode must be a string');
  const firstName = optString(body, 'firstName');
  const lastName = optString(body, 'lastName');
  const email = optString(body, 'email');
  const loginName = optString(body, 'loginName');
  const password = optString(body, 'password');
  const groupCode = optString(body, 'groupCode');
  let status: string | undefined;
  if (body.status !== undefined && body.status !== null && body.status !== '') {
    status = typeof body.status === 'string' || typeof body.status === 'number' ? normalizeStatus(body.status) : undefined;
    if (status !== '0' && status !== '1') throw new BadRequest('status must be 0 (Active) or 1 (Disabled), as a string or a number');
  }

  if (!isValidEmployeeCode(code)) {
    return answer(fail('INVALID_EMPCODE', `${employeeCodeProblem(code)}: an employee code is ${EMPLOYEE_CODE_RULE}`));
  }
  if (!firstName || firstName.trim() === '') return answer(fail('FIRST_NAME_EMPTY', 'firstName is empty'));
  if (!lastName || lastName.trim() === '') return answer(fail('Last_NAME_EMPTY', 'lastName is empty'));
  if (email && !EMAIL.test(email)) return answer(fail('INVALID_EMAIL', `email "${email}" is not a valid e-mail address`));

  const passwordHash = password ? await hashSecret(password) : null;
  const now = new Date().toISOString();
  // Two replicas adding the same employee (or loginName) at once: the loser's insert meets the
  // unique key, its transaction runs again and sees the winner's row.
  return ctx.store.transaction(async (tx) => {
    const existing = await tx.user(code);
    if (!existing && loginName) {
      const other = await tx.userCodeByLogin(loginName);
      if (other !== undefined) return answer(fail('INVALID_EMPCODE', `loginName "${loginName}" is already used by employee ${other}`));
    }
    if (existing) {
      await tx.updateUser(
        code,
        {
          first_name: firstName,
          last_name: lastName,
          email: email === undefined ? existing.email : email || null,
          status: status ?? existing.status,
          group_code: groupCode === undefined ? existing.group_code : groupCode || null,
        },
        now,
      );
    } else {
      await tx.insertUser(
        {
          employee_code: code,
          first_name: firstName,
          last_name: lastName,
          email: email || null,
          login_name: loginName || null,
          password_hash: passwordHash,
          status: status ?? '0',
          group_code: groupCode || null,
        },
        now,
      );
    }
    const row = (await tx.user(code))!;
    const user = userFromRow(row);
    if (!existing && password) user.password = password;
    return answer(ok(user, existing ? 'user updated (loginName and password are never changed on update)' : 'user added'));
  });
}

export async function deleteUser(ctx: ServiceContext, code: string): Promise<HandlerResult> {
  return ctx.store.transaction(async (tx) => {
    const row = await tx.user(code);
    if (!row) return answer(fail('USER_NOT_AVAILABLE', `no user with employeeCode "${code}"`));
    await tx.deleteUser(code);
    return answer(ok(userFromRow(row), 'user and biometric records deleted; attendance events are kept'));
  });
}

export async function getUser(ctx: ServiceContext, code: string | null): Promise<HandlerResult> {
  if (code === null || code === '') throw new BadRequest('the query parameter code (employeeCode) is required');
  const row = await ctx.store.user(code);
  if (!row) return answer(fail('USER_NOT_AVAILABLE', `no user with employeeCode "${code}"`));
  return answer(ok(userFromRow(row)));
}
