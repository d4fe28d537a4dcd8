/**
 * The console's login: one password (`consolePassword` in the secrets file, best as the scrypt
 * hash `edge-agent console --hash-password` prints), sessions held in memory behind a random
 * token in an `HttpOnly`, `SameSite=Strict` cookie, and a throttle on failed attempts.
 *
 * A password given in clear in the secrets file is hashed once at start, so every attempt costs
 * the same scrypt and is compared in constant time either way.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AgentError } from '../core/errors.js';
import { hashSecret, isSecretHash, verifySecret } from '../core/secret-hash.js';
import { Throttle } from '../core/throttle.js';

export const SESSION_COOKIE = 'edge_console_session';
/** Failed attempts from one address within a minute after which it must wait. */
const MAX_FAILURES_PER_MINUTE = 5;
const MAX_SESSIONS = 200;
const MAX_PASSWORD_CHARS = 1024;
/** scrypt checks running at once (each takes ~16 MB and tens of ms): more wait as throttled. */
const MAX_CHECKS_AT_ONCE = 4;

export type LoginResult = { ok: true; token: string } | { ok: false; reason: 'bad' | 'throttled' };

export class ConsoleLogin {
  readonly #hash: string;
  readonly #sessionMs: number;
  readonly #sessions = new Map<string, number>();
  /** Failed attempts per address: each attempt is counted before its check and given back when right. */
  readonly #failures = new Throttle({ rate: { max: MAX_FAILURES_PER_MINUTE, windowMs: 60_000 } });
  #checking = 0;

  private constructor(hash: string, sessionMs: number) {
    this.#hash = hash;
    this.#sessionMs = sessionMs;
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
      return new ConsoleLogin(value, sessionHours * 3_600_000);
    }
    if (value.length < 8) throw new AgentError('CONSOLE_BAD_PASSWORD', 'consolePassword in the secrets is shorter than 8 characters', {});
    return new ConsoleLogin(await hashSecret(value), sessionHours * 3_600_000);
  }

  /** Checks a password from `address`; a success opens a session. */
  async login(password: string, address: string, now = Date.now()): Promise<LoginResult> {
    if (this.#checking >= MAX_CHECKS_AT_ONCE) return { ok: false, reason: 'throttled' };
    // Counted as a failure now, before the check: parallel attempts from one address each count.
    const attempt = this.#failures.take(address, now);
    if (!attempt.ok) return { ok: false, reason: 'throttled' };
    let ok = false;
    this.#checking++;
    try {
      ok = password.length > 0 && password.length <= MAX_PASSWORD_CHARS && (await verifySecret(password, this.#hash));
    } catch (err) {
      attempt.refund();
      throw err;
    } finally {
      this.#checking--;
    }
    if (!ok) return { ok: false, reason: 'bad' };
    this.#failures.clear(address);
    this.#expire(now);
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    const token = randomBytes(32).toString('base64url');
    this.#sessions.set(token, now + this.#sessionMs);
    return { ok: true, token };
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

/** A browser-session cookie: the server ends the session after `sessionHours` without use. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
