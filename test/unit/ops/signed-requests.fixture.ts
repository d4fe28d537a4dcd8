/**
 * What the ops command tests share: the site's ops key, a verifier holding it with a clock the
 * test moves, and requests signed with it for terminal t1 of site s1.
 */
import { randomBytes } from 'node:crypto';
import { keyringOf, OpsAuthenticator, signCommand } from '../../../src/ops/ops-auth.js';

export const KEY = randomBytes(32);
export const BASE = { site: 's1', terminal: 't1' };

/** A router's verifier holding KEY as the site's ops key, with a clock the test moves. */
export function authenticator(now: { t: number }, maxRemembered?: number) {
  return new OpsAuthenticator({
    ...BASE,
    keyring: keyringOf({ opsKey: KEY, opsKeys: {} }),
    windowMs: 300_000,
    now: () => now.t,
    ...(maxRemembered ? { maxRemembered } : {}),
  });
}

/** A request payload signed with `key` (KEY by default) for terminal t1 of site s1. */
export function signed(
  command: string,
  transaction: string,
  args: Record<string, unknown> = {},
  o: { key?: Buffer; kid?: string; ts?: number; terminal?: string } = {},
): Buffer {
  const auth = signCommand(o.key ?? KEY, {
    ...BASE,
    terminal: o.terminal ?? BASE.terminal,
    command,
    transaction,
    ts: o.ts ?? Date.now(),
    kid: o.kid ?? 'site',
    args,
  });
  return Buffer.from(JSON.stringify({ transaction, ...args, auth }));
}
