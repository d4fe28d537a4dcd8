/**
 * The roles an API key of the service has: `admin` may do everything, `admin-audit` only read.
 *
 * Tested in test/integration/api-contract.test.ts (the audit key reads everything and is refused
 * every write with 403).
 */
export const ROLES = ['admin', 'admin-audit'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}
