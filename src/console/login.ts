/**
 * The console's login: one password (`consolePassword` in the secrets file, best as the scrypt
 * hash `edge-agent console --hash-password` prints), sessions held in memory behind a random
 * token in an `HttpOnly`, `SameSite=Strict` cookie, and limits on password checks that hold
 * under parallel attempts and attempts from many addresses (docs/console.md, Login):
 *
 * - **per address** (IPv6: per /64, the block one host holds, as the service counts): 5 failed
 *   attempts in any minute;
 * - **the account** (the console has one password, so this is every attempt anywhere): 10 failed
 *   attempts at once, then 10 a minute, from browsers the console does not know;
 * - **password checks at once**: 4 (each scrypt takes ~16 MB and tens of ms), of which browsers
 *   it does not know may use 3;
 * - **a known browser** (one that logged in here before: the `edge_console_device` cookie, signed
 *   with a key derived from the password secret, good for 90 days) is not held by the address
 *   and account limits but by its own: 5 failed attempts a minute. So a flood of guesses from
 *   many addresses, which empties the account's budget, does not lock out the operator's browser.
 *
 * An attempt is counted when it is admitted, before the password is checked (parallel attempts
 * each count), and given back when the password was right. An attempt refused by a limit is
 * answered without checking the password, whatever it is, so no limit answers whether a
 * password is right; a known browser's attempts are checked, at its own limit, and the cookie
 * cannot be made without the secret.
 *
 * A password given in clear in the secrets file is hashed once at start, so every attempt costs
 * the same scrypt and is compared in constant time either way.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { clientBucketOf } from '../core/client-address.js';
import { AgentError } from '../core/errors.js';
import { hashSecret, isSecretHash, verifySecret } from '../core/secret-hash.js';
import { Throttle, type Ticket } from '../core/throttle.js';

export const SESSION_COOKIE = 'edge_console_session';
/** The cookie of a browser that logged in here before (`knownBrowserCookie`). */
export const DEVICE_COOKIE = 'edge_console_device';
/** Failed attempts within a minute after which an address (or a known browser) must wait. */
const MAX_FAILURES_PER_MINUTE = 5;
/** Failed attempts from browsers the console does not know, from anywhere: at once, then per minute. */
export const ACCOUNT_FAILURES = { burst: 10, perMinute: 10 } as const;
/** How long a known browser's cookie is good for. */
const DEVICE_DAYS = 90;
const MAX_SESSIONS = 200;
const MAX_PASSWORD_CHARS = 1024;
/** scrypt checks running at once (each takes ~16 MB and tens of ms): more wait as throttled. */
const MAX_CHECKS_AT_ONCE = 4;
/** Of those, what browsers the console does not know may use: one is kept for known ones. */
const MAX_UNKNOWN_CHECKS_AT_ONCE = MAX_CHECKS_AT_ONCE - 1;
const DEVICE_DOMAIN = 'edge-console-device-v1';

/** Which limit refused an attempt. */
export type LoginLimit = 'address' | 'account' | 'browser' | 'busy';

export type LoginResult =
  | { ok: true; token: string; device: string }
  | { ok: false; reason: 'bad' }
  | { ok: false; reason: 'throttled'; limit: LoginLimit; retryAfterSec: number };

export class ConsoleLogin {
  readonly #hash: string;
  readonly #sessionMs: number;
  readonly #deviceKey: Buffer;
  readonly #sessions = new Map<string, number>();
  /** Failed attempts per address: each attempt is counted before its check and given back when right. */
  readonly #failures = new Throttle({ rate: { max: MAX_FAILURES_PER_MINUTE, windowMs: 60_000 } });
  /** Failed attempts per known browser (by its cookie's id), counted the same way. */
  readonly #browserFailures = new Throttle({ rate: { max: MAX_FAILURES_PER_MINUTE, windowMs: 60_000 } });
  /** Failed attempts of unknown browsers from anywhere: the account's budget. */
  readonly #account = new Throttle({ rate: ACCOUNT_FAILURES, maxTracked: 1 });
  #checking = 0;

  private constructor(hash: string, sessionMs: number, secret: string) {
    this.#hash = hash;
    this.#sessionMs = sessionMs;
    // From the secret as written (a hash, or a password in clear): the same across restarts, and
    // a new password makes every known browser unknown.
    this.#deviceKey = createHash('sha256').update(`${DEVICE_DOMAIN}\0`).update(secret).digest();
  }

  /** The login for a `consolePassword` secret, or null when none is set (no login, read-only console). */
  static async create(secret: string | null, sessionHours: number): Promise<ConsoleLogin | null> {
    if (secret === null) return null;
    const value = secret.trim();
    if (value.startsWith('scrypt$')) {
      if (!isSecretHash(value))
        throw new AgentError(
          'CONSOLE_BAD_PASSWORD',
          'consolePassword in the secrets looks like a scrypt hash but is not one edge-agent can check',
          {},
        );
      return new ConsoleLogin(value, sessionHours * 3_600_000, value);
    }
    if (value.length < 8) throw new AgentError('CONSOLE_BAD_PASSWORD', 'consolePassword in the secrets is shorter than 8 characters', {});
    return new ConsoleLogin(await hashSecret(value), sessionHours * 3_600_000, value);
  }

  /**
   * Checks a password from `address`; `device` is the browser's `edge_console_device` cookie, if
   * any. A success opens a session and gives the browser a (fresh) known-browser cookie.
   */
  async login(password: string, address: string, now = Date.now(), device: string | null = null): Promise<LoginResult> {
    const browser = this.#knownBrowser(device, now);
    const bucket = clientBucketOf(address);
    const throttled = (limit: LoginLimit, retryAfterSec = 1): LoginResult => ({ ok: false, reason: 'throttled', limit, retryAfterSec });
    if (this.#checking >= (browser ? MAX_CHECKS_AT_ONCE : MAX_UNKNOWN_CHECKS_AT_ONCE)) return throttled('busy');
    // Counted as failures now, before the check: parallel attempts each count.
    const taken: Array<Extract<Ticket, { ok: true }>> = [];
    const take = (throttle: Throttle, key: string, limit: LoginLimit): LoginResult | null => {
      const t = throttle.take(key, now);
      if (t.ok) {
        taken.push(t);
        return null;
      }
      for (const earlier of taken) earlier.refund();
      return throttled(limit, t.retryAfterSec);
    };
    const refused = browser
      ? take(this.#browserFailures, browser, 'browser')
      : (take(this.#failures, bucket, 'address') ?? take(this.#account, 'account', 'account'));
    if (refused) return refused;
    let ok = false;
    this.#checking++;
    try {
      ok = password.length > 0 && password.length <= MAX_PASSWORD_CHARS && (await verifySecret(password, this.#hash));
    } catch (err) {
      for (const t of taken) t.refund();
      throw err;
    } finally {
      this.#checking--;
    }
    if (!ok) return { ok: false, reason: 'bad' };
    for (const t of taken) t.refund();
    if (browser) this.#browserFailures.clear(browser);
    else this.#failures.clear(bucket);
    this.#expire(now);
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    const token = randomBytes(32).toString('base64url');
    this.#sessions.set(token, now + this.#sessionMs);
    return { ok: true, token, device: this.#newBrowser(browser, now) };
  }

  /** A known-browser cookie value: `v1.<id>.<issued, s>.<mac>`, for `id` (a new one when null). */
  #newBrowser(id: string | null, now: number): string {
    const browser = id ?? randomBytes(16).toString('base64url');
    const issued = Math.floor(now / 1000);
    return `v1.${browser}.${issued}.${this.#deviceMac(browser, issued).toString('base64url')}`;
  }

  #deviceMac(id: string, issued: number): Buffer {
    return createHmac('sha256', this.#deviceKey).update(`${DEVICE_DOMAIN}|${id}|${issued}`).digest();
  }

  /** The id of a known browser from its cookie: signed with this console's key, not older than 90 days; null otherwise. */
  #knownBrowser(cookie: string | null, now: number): string | null {
    const m = cookie ? /^v1\.([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(cookie) : null;
    if (!m) return null;
    const [, id, issuedText, mac] = m;
    const issued = Number(issuedText);
    const ageSec = now / 1000 - issued;
    if (ageSec > DEVICE_DAYS * 86_400 || ageSec < -86_400) return null;
    return timingSafeEqual(Buffer.from(mac!, 'base64url'), this.#deviceMac(id!, issued)) ? id! : null;
  }

  /** True for a live session's token; using it (`touch`) extends it. */
  valid(token: string | null, now = Date.now(), touch = true): boolean {
    if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
    // Constant-time against each live token: a session token must not leak through timing.
    let found: string | null = null;
    const given = Buffer.from(token);
    for (const t of this.#sessions.keys()) if (timingSafeEqual(Buffer.from(t), given)) found = t;
    if (found === null) return false;
    if (this.#sessions.get(found)! < now) {
      this.#sessions.delete(found);
      return false;
    }
    if (touch) this.#sessions.set(found, now + this.#sessionMs);
    return true;
  }

  logout(token: string | null): void {
    if (token) this.#sessions.delete(token);
  }

  #expire(now: number): void {
    for (const [t, until] of this.#sessions) if (until < now) this.#sessions.delete(t);
  }
}

/** The value of one cookie from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return null;
}

/** The known-browser cookie: sent only to /login, for 90 days. */
export function knownBrowserCookie(value: string, secure: boolean): string {
  return `${DEVICE_COOKIE}=${value}; Path=/login; Max-Age=${DEVICE_DAYS * 86_400}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** A browser-session cookie: the server ends the session after `sessionHours` without use. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
