/**
 * Authenticated ops commands. A request on `<prefix>/<site>/<terminal>/req/<command>` carries,
 * beside its transaction and arguments, `"auth": {"kid", "ts", "mac"}`:
 *
 * - `kid`: which key signed it: `site` for the site's ops key (`opsKey` in the secrets), or an
 *   operator's key id (`opsKeys.<id>`);
 * - `ts`: when it was signed, milliseconds since the epoch (UTC);
 * - `mac`: base64url of HMAC-SHA256(key, canonical JSON of
 *   `["edge-agent-ops-v1", site, terminal, command, transaction, ts, kid, arguments]`), where the
 *   canonical JSON has object keys sorted (by UTF-16 code units) and no white space.
 *
 * The terminal accepts a request when the key id names a key it holds, the MAC matches, `ts` is
 * within the window of its own clock (`ops.authWindowSec`, 5 minutes either way by default), and
 * the transaction id has not been seen with that key inside the window (the ids seen are
 * remembered until their timestamp leaves the window, at most `maxRemembered` of them).
 * Anything else is `OPS_UNAUTHENTICATED`, and the command is not run.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AgentError } from '../core/errors.js';
import { SITE_OPS_KEY_ID, type Secrets } from '../config/secrets.js';

export const OPS_AUTH_DOMAIN = 'edge-agent-ops-v1';
const MAX_DEPTH = 32;

export interface OpsAuth {
  kid: string;
  ts: number;
  mac: string;
}

export const OpsAuthSchema = z.strictObject({
  kid: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a key id: letters, digits, dot, dash or underscore, at most 64'),
  ts: z.number().int().min(0).max(8_640_000_000_000_000),
  mac: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'base64url of 32 bytes (43 characters)'),
});

/** JSON with object keys sorted and no white space: the same text for the same value on both sides. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH)
    throw new AgentError(
      'OPS_BAD_REQUEST',
      `the arguments are nested deeper than ${MAX_DEPTH} levels`,
      {},
      { hint: 'send flat arguments such as {"employeeCode": "E1001"}' },
    );
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new AgentError('OPS_BAD_REQUEST', 'a number in the arguments is not finite', {});
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k], depth + 1)}`).join(',')}}`;
  }
  throw new AgentError('OPS_BAD_REQUEST', `a value of type ${typeof value} cannot be signed`, {});
}

export interface SignedFields {
  site: string;
  terminal: string;
  command: string;
  transaction: string;
  ts: number;
  kid: string;
  args: Record<string, unknown>;
}

/**
 * The one signing primitive of ops: HMAC-SHA256 of the canonical JSON of `parts`, whose first
 * member names the domain (`edge-agent-ops-v1` for commands, `edge-agent-telemetry-v1` for what
 * terminals publish), so a MAC of one kind never passes for another.
 */
export function macOf(key: Buffer, parts: unknown[]): Buffer {
  return createHmac('sha256', key).update(canonicalJson(parts), 'utf8').digest();
}

/** Whether the base64url `given` is `expected`, in constant time. */
export function macMatches(given: string, expected: Buffer): boolean {
  const g = Buffer.from(given, 'base64url');
  return g.length === expected.length && timingSafeEqual(g, expected);
}

function mac(key: Buffer, f: SignedFields): Buffer {
  return macOf(key, [OPS_AUTH_DOMAIN, f.site, f.terminal, f.command, f.transaction, f.ts, f.kid, f.args]);
}

/** The `auth` member of a request signed with `key`. */
export function signCommand(key: Buffer, f: SignedFields): OpsAuth {
  return { kid: f.kid, ts: f.ts, mac: mac(key, f).toString('base64url') };
}

/** The keys a terminal holds, by key id. */
export interface OpsKeyring {
  key(kid: string): Buffer | null;
  readonly ids: string[];
}

export function keyringOf(secrets: Pick<Secrets, 'opsKey' | 'opsKeys'>): OpsKeyring {
  const keys = new Map<string, Buffer>(Object.entries(secrets.opsKeys ?? {}));
  if (secrets.opsKey) keys.set(SITE_OPS_KEY_ID, secrets.opsKey);
  return { key: (kid) => keys.get(kid) ?? null, ids: [...keys.keys()].sort() };
}

export interface RequestToVerify {
  command: string;
  transaction: string | null;
  args: Record<string, unknown>;
  auth: unknown;
}

/** What the command router asks before running anything. */
export interface RequestVerifier {
  /** Resolves to the key id that signed the request; throws `OPS_UNAUTHENTICATED` otherwise. */
  verify(req: RequestToVerify): string;
}

export interface OpsAuthenticatorOptions {
  site: string;
  terminal: string;
  keyring: OpsKeyring;
  /** How far `ts` may be from the terminal's clock, either way. */
  windowMs: number;
  /** Transaction ids remembered at most (default 10,000); past that, new commands wait for the window to move. */
  maxRemembered?: number;
  now?: () => number;
}

const HINT =
  'sign the command with an ops key this terminal holds (edge-agent ops send does it); see docs/operator.md, Authenticated commands';

export class OpsAuthenticator implements RequestVerifier {
  readonly #o: Required<OpsAuthenticatorOptions>;
  /** `kid\ntransaction` → when it may be forgotten (its ts + the window). */
  readonly #seen = new Map<string, number>();

  constructor(options: OpsAuthenticatorOptions) {
    this.#o = { maxRemembered: 10_000, now: Date.now, ...options };
  }

  /** How many transaction ids are remembered now. */
  get remembered(): number {
    return this.#seen.size;
  }

  verify(req: RequestToVerify): string {
    const refuse = (why: string, context: Record<string, unknown> = {}, hint = HINT) =>
      new AgentError(
        'OPS_UNAUTHENTICATED',
        `command not authenticated: ${why}`,
        { command: req.command.slice(0, 64), ...context },
        { hint },
      );
    if (req.auth === undefined || req.auth === null) throw refuse('the request carries no "auth"');
    const parsed = OpsAuthSchema.safeParse(req.auth);
    if (!parsed.success)
      throw refuse(`"auth" is malformed (${parsed.error.issues.map((i) => `${i.path.join('.') || 'auth'}: ${i.message}`).join('; ')})`);
    const auth = parsed.data;
    if (req.transaction === null || req.transaction === '') throw refuse('a signed command needs a transaction id');
    if (this.#o.keyring.ids.length === 0)
      throw refuse(
        'this terminal holds no ops key',
        {},
        "put opsKey (or opsKeys.<id>) in the terminal's secrets file (edge-agent provision --ops-key-file), then restart the agent",
      );
    const key = this.#o.keyring.key(auth.kid);
    if (!key) throw refuse(`this terminal holds no ops key with id "${auth.kid}"`, { kid: auth.kid });
    const expected = mac(key, {
      site: this.#o.site,
      terminal: this.#o.terminal,
      command: req.command,
      transaction: req.transaction,
      ts: auth.ts,
      kid: auth.kid,
      args: req.args,
    });
    if (!macMatches(auth.mac, expected))
      throw refuse('the signature does not match (another key, terminal, command or arguments)', { kid: auth.kid });
    const now = this.#o.now();
    this.#forget(now);
    if (Math.abs(now - auth.ts) > this.#o.windowMs) {
      throw refuse(
        `the signature's time is ${Math.round((auth.ts - now) / 1000)} s from this terminal's clock (at most ${Math.round(this.#o.windowMs / 1000)} s)`,
        { kid: auth.kid },
        "sign it again now; if it keeps happening, check the clocks (edge-agent doctor shows whether this terminal's clock is synchronized)",
      );
    }
    const id = `${auth.kid}\n${req.transaction}`;
    if (this.#seen.has(id))
      throw refuse(
        `transaction "${req.transaction.slice(0, 64)}" was already used with key "${auth.kid}" (a replay)`,
        { kid: auth.kid },
        'give every command a new transaction id',
      );
    if (this.#seen.size >= this.#o.maxRemembered)
      throw refuse(`more than ${this.#o.maxRemembered} commands inside the window`, { kid: auth.kid }, 'wait a minute and send it again');
    this.#seen.set(id, auth.ts + this.#o.windowMs);
    return auth.kid;
  }

  #forget(now: number): void {
    for (const [id, until] of this.#seen) if (until < now) this.#seen.delete(id);
  }
}
