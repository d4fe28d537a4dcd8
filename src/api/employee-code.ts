/**
 * One rule for employee codes, shared by the agent (punches, enrolment, the template cache, ops
 * commands, site sync) and the attendance service, so a code one side accepts the other can
 * store, find, punch and delete.
 *
 * The contract (attendance-api.md) only says "string" and puts the code in URL paths and MQTT
 * topics; the rule chosen (docs/integrator.md, Employee codes):
 * - 1 to 64 characters (Unicode code points), compared and stored in Unicode NFC;
 * - no lone surrogate (it cannot be stored as text: it would come back as U+FFFD);
 * - no control, format (bidi overrides, zero-width characters, soft hyphen), private-use or
 *   noncharacter code point, and no white space;
 * - none of `/ \ ? # %` (path and topic separators, query and escape characters);
 * - not `.` or `..` (URL path segments that clients and proxies collapse);
 * - no compatibility character: a code must be its own NFKC form. `Ｅ１００１` (full width), `ﬁ`
 *   (a ligature), `²`, `①`, `Ⅳ` look like plain letters and digits in every report; they are
 *   refused, with the plain form to type instead, rather than folded silently: folding would make
 *   a code already stored in such a form, and the plain one, two names for one person.
 */
import { z } from 'zod';
import { AgentError } from '../core/errors.js';

export const EMPLOYEE_CODE_MAX_CHARS = 64;

/** The rule in one line, for hints and error messages. */
export const EMPLOYEE_CODE_RULE = `1 to ${EMPLOYEE_CODE_MAX_CHARS} characters, no spaces, control, bidi or zero-width characters, no full-width or other compatibility forms (NFKC), none of / \\ ? # %, not "." or ".."`;

export type EmployeeCodeCheck = { ok: true; code: string } | { ok: false; problem: string };

const LONE_SURROGATE = /\p{Cs}/u;
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Co}\p{Noncharacter_Code_Point}\p{White_Space}\p{Z}/\\?#%]/u;

/** A short, printable view of a value that failed the rule (never the whole of a huge input). */
export function showCode(v: unknown): string {
  if (typeof v !== 'string') return v === undefined ? 'nothing' : typeof v;
  const cps = [...v];
  const head = cps.slice(0, 24).join('');
  return `${JSON.stringify(head)}${cps.length > 24 ? `… (${cps.length} characters)` : ''}`;
}

/** Checks `v` against the rule; the code that passes is returned in NFC. */
export function checkEmployeeCode(v: unknown): EmployeeCodeCheck {
  if (typeof v !== 'string') return { ok: false, problem: `an employee code must be a string, got ${showCode(v)}` };
  if (v.length === 0) return { ok: false, problem: 'the employee code is empty' };
  // A bound before normalising (decomposed input may be several times longer than its NFC form).
  if (v.length > EMPLOYEE_CODE_MAX_CHARS * 8)
    return { ok: false, problem: `the employee code ${showCode(v)} is longer than ${EMPLOYEE_CODE_MAX_CHARS} characters` };
  if (LONE_SURROGATE.test(v))
    return { ok: false, problem: `the employee code ${showCode(v)} holds a lone surrogate (not valid Unicode text)` };
  const code = v.normalize('NFC');
  const chars = [...code];
  if (chars.length > EMPLOYEE_CODE_MAX_CHARS)
    return { ok: false, problem: `the employee code ${showCode(v)} is longer than ${EMPLOYEE_CODE_MAX_CHARS} characters` };
  const bad = FORBIDDEN.exec(code);
  if (bad) {
    return { ok: false, problem: `the employee code ${showCode(v)} holds ${codePointName(bad[0])}, which codes may not hold` };
  }
  if (code === '.' || code === '..') return { ok: false, problem: `"${code}" is not an employee code` };
  const compat = compatibilityProblem(code);
  if (compat) return { ok: false, problem: compat };
  return { ok: true, code };
}

/** U+FF25 */
function codePointName(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What is wrong with an NFC code that is not its own NFKC form (null when it is), and the plain form to type when that one passes. */
function compatibilityProblem(code: string): string | null {
  const plain = code.normalize('NFKC');
  if (plain === code) return null;
  const ch = [...code].find((c) => c.normalize('NFKC') !== c);
  const what = ch ? `holds ${codePointName(ch)}, a compatibility form of ${JSON.stringify(ch.normalize('NFKC'))}` : 'is not in NFKC';
  const typed = !FORBIDDEN.test(plain) && plain !== '.' && plain !== '..' && [...plain].length <= EMPLOYEE_CODE_MAX_CHARS;
  return `the employee code ${showCode(code)} ${what} (full-width, ligature, superscript and the like look the same as plain characters in reports)${
    typed ? `: write it as ${JSON.stringify(plain)}` : ''
  }`;
}

/** The code in NFC, or `API_EMPLOYEE_CODE_INVALID` saying what is wrong with it. */
export function parseEmployeeCode(v: unknown): string {
  const r = checkEmployeeCode(v);
  if (!r.ok)
    throw new AgentError(
      'API_EMPLOYEE_CODE_INVALID',
      r.problem,
      { employeeCode: typeof v === 'string' ? showCode(v) : null },
      { hint: `an employee code is ${EMPLOYEE_CODE_RULE}` },
    );
  return r.code;
}

/** The code as a lookup key: NFC when it is valid text, as given otherwise (it then matches nothing stored). */
export function lookupEmployeeCode(v: string): string {
  return LONE_SURROGATE.test(v) ? v : v.normalize('NFC');
}

/** The rule as a zod schema (for wire inputs): the output is the NFC code. */
export const employeeCodeSchema = z.string().transform((v, ctx) => {
  const r = checkEmployeeCode(v);
  if (r.ok) return r.code;
  ctx.addIssue({ code: 'custom', message: r.problem });
  return z.NEVER;
});
