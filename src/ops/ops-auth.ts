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
 * within the window of its own clock (`ops.authWindowSec`, 5 minutes either way by default), the
 * transaction id has not been accepted with that key inside the window, and `ts` is after the
 * key's floor. Anything else is `OPS_UNAUTHENTICATED`, and the command is not run.
 *
 * What was accepted is remembered across restarts (a `ReplayLedger`: the terminal's database):
 * - each accepted (key id, transaction, ts) until `ts` has left the window (at most
 *   `maxRemembered` of them; past that, new commands wait for the window to move);
 * - per key id a floor: the newest `ts` forgotten. A command forgotten is refused by the window as
 *   long as the clock only moves forward; the floor still refuses it after the terminal's clock
 *   stepped back (an RTC-less Pi booting at an older time, a bad time source corrected).
 *
 * An accepted command is on disk before it runs (`verify` resolves after the ledger's write, or
 * rejects with `OPS_REPLAY_UNRECORDED`): the start that a `restart` causes already knows it.
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

function mac(key: Buffer, f: SignedFields): Buffer {
  const text = canonicalJson([OPS_AUTH_DOMAIN, f.site, f.terminal, f.command, f.transaction, f.ts, f.kid, f.args]);
  return createHmac('sha256', key).update(text, 'utf8').digest();
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
  /** Resolves to the key id that signed the request, once it is remembered; rejects with `OPS_UNAUTHENTICATED` otherwise. */
  verify(req: RequestToVerify): Promise<string>;
}

/** A command accepted: by which key, its transaction id and the signature's time. */
export interface AcceptedCommand {
  kid: string;
  transaction: string;
  ts: number;
}

/** What the authenticator remembers: the accepted commands inside the window, and per key id the newest `ts` forgotten. */
export interface ReplayMemory {
  accepted: AcceptedCommand[];
  floors: Record<string, number>;
}

/** Where accepted commands are kept across restarts (the terminal's database: src/store/replay-store.ts). */
export interface ReplayLedger {
  load(): Promise<ReplayMemory>;
  /**
   * Records `accepted` durably, and forgets every command signed before `forgetBefore`, raising
   * each key's floor to the newest `ts` it forgot. Resolves once it is on disk.
   */
  record(accepted: AcceptedCommand, forgetBefore: number): Promise<void>;
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

export interface DurableAuthenticatorOptions extends OpsAuthenticatorOptions {
  ledger: ReplayLedger;
}

const HINT =
  'sign the command with an ops key this terminal holds (edge-agent ops send does it); see docs/operator.md, Authenticated commands';

export class OpsAuthenticator implements RequestVerifier {
  readonly #o: Required<OpsAuthenticatorOptions>;
  readonly #ledger: ReplayLedger | null;
  /** `kid\ntransaction` → its command (forgotten once `ts` left the window). */
  readonly #seen = new Map<string, AcceptedCommand>();
  /** Per key id: the newest `ts` forgotten; anything signed at or before it is refused. */
  readonly #floors = new Map<string, number>();

  /** An authenticator that remembers in memory only (a restart forgets): tests and tools. */
  constructor(options: OpsAuthenticatorOptions, ledger: ReplayLedger | null = null, memory?: ReplayMemory) {
    this.#o = { maxRemembered: 10_000, now: Date.now, ...options };
    this.#ledger = ledger;
    for (const c of memory?.accepted ?? []) this.#seen.set(`${c.kid}\n${c.transaction}`, c);
    for (const [kid, ts] of Object.entries(memory?.floors ?? {})) this.#floors.set(kid, ts);
  }

  /** An authenticator that remembers what it accepts in `ledger`, starting from what the ledger holds. */
  static async open(options: DurableAuthenticatorOptions): Promise<OpsAuthenticator> {
    const { ledger, ...rest } = options;
    return new OpsAuthenticator(rest, ledger, await ledger.load());
  }

  /** How many transaction ids are remembered now. */
  get remembered(): number {
    return this.#seen.size;
  }

  /** The newest `ts` forgotten for `kid` (null: none). */
  floor(kid: string): number | null {
    return this.#floors.get(kid) ?? null;
  }

  async verify(req: RequestToVerify): Promise<string> {
    // Everything up to remembering the transaction is synchronous: the same request delivered
    // twice at once is accepted once.
    const accepted = this.#accept(req);
    if (this.#ledger) {
      try {
        await this.#ledger.record(accepted, this.#o.now() - this.#o.windowMs);
      } catch (err) {
        // Kept in memory (it is used); not run, since a restart could not refuse it again.
        throw new AgentError(
          'OPS_REPLAY_UNRECORDED',
          `command not run: this terminal could not record it against replays (${(err as Error).message})`,
          { command: req.command.slice(0, 64), kid: accepted.kid },
          { cause: err },
        );
      }
    }
    return accepted.kid;
  }

  #accept(req: RequestToVerify): AcceptedCommand {
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
    const given = Buffer.from(auth.mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw refuse('the signature does not match (another key, terminal, command or arguments)', { kid: auth.kid });
    const now = this.#o.now();
    this.#forget(now - this.#o.windowMs);
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
    const floor = this.#floors.get(auth.kid);
    if (floor !== undefined && auth.ts <= floor)
      throw refuse(
        `signed at ${new Date(auth.ts).toISOString()}, not after a command of key "${auth.kid}" already forgotten (${new Date(floor).toISOString()}): a replay, or the signer's clock went back`,
        { kid: auth.kid },
        "sign it again now; if it keeps happening, the signer's clock is behind: synchronize it",
      );
    if (this.#seen.size >= this.#o.maxRemembered)
      throw refuse(`more than ${this.#o.maxRemembered} commands inside the window`, { kid: auth.kid }, 'wait a minute and send it again');
    const accepted = { kid: auth.kid, transaction: req.transaction, ts: auth.ts };
    this.#seen.set(id, accepted);
    return accepted;
  }

  /** Forgets the commands signed before `before`, raising their keys' floors (as the ledger does). */
  #forget(before: number): void {
    for (const [id, c] of this.#seen) {
      if (c.ts >= before) continue;
      this.#seen.delete(id);
      if (c.ts > (this.#floors.get(c.kid) ?? -Infinity)) this.#floors.set(c.kid, c.ts);
    }
  }
}
