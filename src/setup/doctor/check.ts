/**
 * What every doctor check answers: pass, warn or fail, with a detail and a hint that says what to
 * do. A check whose part is not configured is a `warn` saying so, never a pass.
 */
import { describeError, isAgentError } from '../../core/errors.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do; null when there is nothing to do. */
  hint: string | null;
}

export const pass = (name: string, detail: string): CheckResult => ({ name, status: 'pass', detail, hint: null });
export const warn = (name: string, detail: string, hint: string): CheckResult => ({ name, status: 'warn', detail, hint });
export const fail = (name: string, detail: string, hint: string): CheckResult => ({ name, status: 'fail', detail, hint });

/** A failed check from an error: its code and message as detail, its hint as hint. */
export function fromError(name: string, err: unknown, fallbackHint: string, status: CheckStatus = 'fail'): CheckResult {
  const e = isAgentError(err) ? err : null;
  return { name, status, detail: e ? `${e.code}: ${e.message}` : describeError(err), hint: e?.hint ?? fallbackHint };
}
