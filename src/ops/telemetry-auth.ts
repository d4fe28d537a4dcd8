/**
 * Signed telemetry: what a terminal publishes retained (`state`, `info`, `metrics`, the last will
 * included) and what the console publishes for a site (`<prefix>/<site>/alerts`) carries a
 * member `"sig"` that old readers ignore:
 *
 *   "sig": {"kid": "site", "ts": <ms>, "conn": <n>, "seq": <n>, "will": true?, "mac": "<base64url>"}
 *
 * - `kid`: the key that signed it (`site`: the site's ops key, opsKey in the secrets);
 * - `ts`: when it was signed (ms since the epoch), for people; the order does not rely on clocks;
 * - `conn`: the publisher's connection number, above every earlier one of that publisher (it is
 *   kept in the terminal's data folder, so it also grows across restarts and clock steps);
 * - `seq`: the message's number inside its connection; the last will, signed when the connection
 *   is made, has `seq` 2^53-1 and `"will": true`, so it sorts after everything the connection
 *   published and before everything the next one publishes;
 * - `mac`: base64url of HMAC-SHA256(key, canonical JSON of `["edge-agent-telemetry-v1", site,
 *   terminal, leaf, kid, ts, conn, seq, will, body]`), `body` being the document without `sig`
 *   (the canonical JSON of ops-auth.ts; the one HMAC helper `macOf`). The site's alerts use the
 *   terminal `""` and the leaf `alerts`.
 *
 * The state, a bare word before, is now a JSON document too: `{"state": "online", "at": ..., "sig": ...}`
 * (a bare word cannot carry a signature, and the last will is one message). Readers take both.
 *
 * A reader accepts a signed message when the key id names a key it holds, the MAC matches and its
 * (conn, seq) is not below the last one it accepted for that terminal and leaf: a replayed older
 * message (an `online` of before the `lost`) is stale. Anything else is unverified.
 */
import { z } from 'zod';
import { type OpsKeyring, macMatches, macOf } from './ops-auth.js';
import { SITE_OPS_KEY_ID } from '../config/secrets.js';

export const TELEMETRY_DOMAIN = 'edge-agent-telemetry-v1';
/** The `seq` of a last will: after every message of its connection. */
export const WILL_SEQ = Number.MAX_SAFE_INTEGER;

export interface TelemetrySig {
  kid: string;
  ts: number;
  conn: number;
  seq: number;
  will?: true;
  mac: string;
}

const SigSchema = z.strictObject({
  kid: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  ts: z.number().int().min(0).max(8_640_000_000_000_000),
  conn: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  will: z.literal(true).optional(),
  mac: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});

export interface TelemetrySubject {
  site: string;
  /** `""` for what the console publishes for a whole site. */
  terminal: string;
  leaf: string;
}

function telemetryMac(key: Buffer, t: TelemetrySubject, s: Omit<TelemetrySig, 'mac'>, body: unknown): Buffer {
  return macOf(key, [TELEMETRY_DOMAIN, t.site, t.terminal, t.leaf, s.kid, s.ts, s.conn, s.seq, s.will === true, body]);
}

export interface TelemetrySignerOptions {
  site: string;
  terminal: string;
  key: Buffer;
  kid?: string;
  now?: () => number;
}

/** Signs what one publisher (a terminal, or the console for `terminal: ""`) publishes. */
export class TelemetrySigner {
  readonly #o: Required<TelemetrySignerOptions>;
  #conn = 0;
  #seq = 0;

  constructor(options: TelemetrySignerOptions) {
    this.#o = { kid: SITE_OPS_KEY_ID, now: Date.now, ...options };
  }

  /** A new connection: its number must be above every earlier one of this publisher. */
  beginConnection(conn: number): void {
    this.#conn = conn;
    this.#seq = 0;
  }

  get connection(): number {
    return this.#conn;
  }

  /** `body` with its `sig`, next in this connection's order. */
  sign<T extends Record<string, unknown>>(leaf: string, body: T): T & { sig: TelemetrySig } {
    return this.#sign(leaf, body, ++this.#seq, false);
  }

  /** The last will of this connection: after all it publishes, before the next connection. */
  signWill<T extends Record<string, unknown>>(leaf: string, body: T): T & { sig: TelemetrySig } {
    return this.#sign(leaf, body, WILL_SEQ, true);
  }

  #sign<T extends Record<string, unknown>>(leaf: string, body: T, seq: number, will: boolean): T & { sig: TelemetrySig } {
    const s = { kid: this.#o.kid, ts: this.#o.now(), conn: this.#conn, seq, ...(will ? { will: true as const } : {}) };
    const mac = telemetryMac(this.#o.key, { site: this.#o.site, terminal: this.#o.terminal, leaf }, s, body).toString('base64url');
    return { ...body, sig: { ...s, mac } };
  }
}

export type TelemetryCheck = { verified: true; conn: number; seq: number; will: boolean } | { verified: false; reason: string };

/** Checks the `sig` of one document (its other members are the body) against the keys held. */
export function checkTelemetry(keyring: OpsKeyring | null, t: TelemetrySubject, doc: Record<string, unknown>): TelemetryCheck {
  if (doc.sig === undefined) return { verified: false, reason: 'not signed' };
  const parsed = SigSchema.safeParse(doc.sig);
  if (!parsed.success) return { verified: false, reason: 'a malformed signature' };
  const s = parsed.data;
  if (s.will === true && s.seq !== WILL_SEQ) return { verified: false, reason: 'a malformed signature' };
  const key = keyring?.key(s.kid) ?? null;
  if (!key) return { verified: false, reason: `signed with a key not held here ("${s.kid}")` };
  const { sig: _sig, ...body } = doc;
  let expected: Buffer;
  try {
    expected = telemetryMac(key, t, s, body);
  } catch {
    return { verified: false, reason: 'a body that cannot be signed (nested too deep)' };
  }
  if (!macMatches(s.mac, expected)) return { verified: false, reason: 'a signature that does not match' };
  return { verified: true, conn: s.conn, seq: s.seq, will: s.will === true };
}

/** A telemetry payload as read: the document (JSON object) and, for `state`, the state word. */
export interface TelemetryPayload {
  doc: Record<string, unknown> | null;
  /** The state word (`state` leaf only): from `{"state": ...}` or a bare word (older agents). */
  state: string | null;
}

/** Reads a state payload: a JSON document `{"state": ...}` (signed), or a bare word (unsigned, older agents). */
export function readStatePayload(text: string): TelemetryPayload {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return { doc: null, state: trimmed === '' ? null : trimmed };
  try {
    const doc = JSON.parse(trimmed) as unknown;
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { doc: null, state: null };
    const state = (doc as Record<string, unknown>).state;
    return { doc: doc as Record<string, unknown>, state: typeof state === 'string' ? state : null };
  } catch {
    return { doc: null, state: null };
  }
}

export type TelemetryVerdict = 'verified' | 'stale' | 'unverified';

/**
 * What a fleet view believes: each terminal's newest accepted (conn, seq) per leaf. A view asks
 * `judge` for every message and keeps the verdict with the terminal (`verified` terminals never
 * take an unverified message; `stale` ones are dropped). Memory: one entry per terminal and leaf
 * the view keeps; `forget` when it drops a terminal.
 */
export class TelemetryLedger {
  readonly #keyring: OpsKeyring | null;
  readonly #last = new Map<string, [number, number]>();

  constructor(keyring: OpsKeyring | null) {
    this.#keyring = keyring && keyring.ids.length > 0 ? keyring : null;
  }

  /** True when this view holds a key to verify with. */
  get canVerify(): boolean {
    return this.#keyring !== null;
  }

  judge(t: TelemetrySubject, doc: Record<string, unknown> | null): TelemetryVerdict {
    if (!doc || !this.#keyring) return 'unverified';
    const c = checkTelemetry(this.#keyring, t, doc);
    if (!c.verified) return 'unverified';
    const id = `${t.site}/${t.terminal}/${t.leaf}`;
    const last = this.#last.get(id);
    if (last && (c.conn < last[0] || (c.conn === last[0] && c.seq < last[1]))) return 'stale';
    this.#last.set(id, [c.conn, c.seq]);
    return 'verified';
  }

  forget(site: string, terminal: string): void {
    for (const leaf of ['state', 'info', 'metrics', 'alerts']) this.#last.delete(`${site}/${terminal}/${leaf}`);
  }
}
