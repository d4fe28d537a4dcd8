import { describe, expect, it } from 'vitest';
import { ACCOUNT_FAILURES, ConsoleLogin, cookieValue, knownBrowserCookie, sessionCookie } from '../../../src/console/login.js';
import { hashSecret } from '../../../src/core/secret-hash.js';

/** The known-browser cookie a successful login gives. */
async function deviceOf(login: ConsoleLogin, now = Date.now()): Promise<string> {
  const r = await login.login('long enough secret', '10.9.9.9', now);
  if (!r.ok) throw new Error(`login failed: ${JSON.stringify(r)}`);
  return r.device;
}

describe('the console login', () => {
  it('checks the password against its scrypt hash and opens a session that slides and ends', async () => {
    const login = (await ConsoleLogin.create(await hashSecret('correct horse battery'), 1))!;
    expect(await login.login('wrong password', '10.0.0.1', 0)).toEqual({ ok: false, reason: 'bad' });
    const ok = await login.login('correct horse battery', '10.0.0.1', 0);
    expect(ok.ok).toBe(true);
    const token = (ok as { token: string }).token;
    expect(login.valid(token, 30 * 60_000)).toBe(true);
    // used at 30 min: good until 90 min
    expect(login.valid(token, 80 * 60_000)).toBe(true);
    expect(login.valid(token, 80 * 60_000 + 3_600_001)).toBe(false);
    expect(login.valid('x'.repeat(43), 0)).toBe(false);
    expect(login.valid(null, 0)).toBe(false);
    const again = (await login.login('correct horse battery', '10.0.0.1', 0)) as { token: string };
    login.logout(again.token);
    expect(login.valid(again.token, 1)).toBe(false);
  });

  it('takes a password in clear from the secrets (hashed at start), refuses a short one or a broken hash', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    expect((await login.login('long enough secret', 'a')).ok).toBe(true);
    await expect(ConsoleLogin.create('short', 12)).rejects.toMatchObject({ code: 'CONSOLE_BAD_PASSWORD' });
    await expect(ConsoleLogin.create('scrypt$16384$8$1$abc$def', 12)).rejects.toMatchObject({ code: 'CONSOLE_BAD_PASSWORD' });
    expect(await ConsoleLogin.create(null, 12)).toBeNull();
  });

  it('makes an address wait after five failures in a minute, even with the right password', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    for (let i = 0; i < 5; i++) expect(await login.login(`nope ${i}`, '10.0.0.9', 1000 + i)).toEqual({ ok: false, reason: 'bad' });
    expect(await login.login('long enough secret', '10.0.0.9', 2000)).toEqual({
      ok: false,
      reason: 'throttled',
      limit: 'address',
      retryAfterSec: 59,
    });
    expect((await login.login('long enough secret', '10.0.0.8', 2000)).ok).toBe(true);
    expect((await login.login('long enough secret', '10.0.0.9', 62_000)).ok).toBe(true);
  });

  it('counts an IPv6 host by its /64: a new address of the same block for every guess gains nothing', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    for (let i = 0; i < 5; i++)
      expect(await login.login(`nope ${i}`, `2001:db8:7:7::${i + 1}`, 1000 + i)).toEqual({ ok: false, reason: 'bad' });
    expect(await login.login('long enough secret', '2001:db8:7:7:ffff::9', 2000)).toMatchObject({ reason: 'throttled', limit: 'address' });
    expect((await login.login('long enough secret', '2001:db8:7:8::1', 2000)).ok).toBe(true);
  });

  it('counts failed attempts made in parallel from one address each: none overwrites another', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const parallel = await Promise.all(Array.from({ length: 3 }, (_, i) => login.login(`nope ${i}`, '10.2.0.1', 1000)));
    expect(parallel).toEqual(Array.from({ length: 3 }, () => ({ ok: false, reason: 'bad' })));
    const again = await Promise.all(Array.from({ length: 3 }, (_, i) => login.login(`nope ${i}`, '10.2.0.1', 1001)));
    expect(again.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['bad', 'bad', 'throttled']);
    expect(await login.login('long enough secret', '10.2.0.1', 1002)).toMatchObject({ reason: 'throttled', limit: 'address' });
    expect((await login.login('long enough secret', '10.2.0.1', 61_001)).ok).toBe(true);
  });

  it('runs at most four password checks at once, three for browsers it does not know: more are throttled, not queued', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const known = await deviceOf(login);
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => login.login('long enough secret', `10.1.0.${i}`)),
      login.login('long enough secret', '10.1.0.7', Date.now(), known),
      login.login('long enough secret', '10.1.0.8', Date.now(), known),
    ]);
    expect(results.map((r) => (r.ok ? 'ok' : r.reason === 'throttled' ? r.limit : r.reason))).toEqual([
      'ok',
      'ok',
      'ok',
      'busy',
      'busy',
      'busy',
      'ok',
      'busy',
    ]);
    expect((await login.login('long enough secret', '10.1.0.9')).ok).toBe(true);
  });

  it('holds failures from many addresses to the account budget: past it every unknown browser waits, right password or not', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const t0 = 1_000_000;
    for (let i = 0; i < ACCOUNT_FAILURES.burst; i++)
      expect(await login.login(`guess ${i}`, `10.3.0.${i}`, t0 + i)).toEqual({ ok: false, reason: 'bad' });
    // Not checked: the same answer for a wrong and for the right password (no oracle).
    const wrong = await login.login('guess again', '10.3.1.1', t0 + 100);
    const right = await login.login('long enough secret', '10.3.1.2', t0 + 100);
    expect(wrong).toEqual({ ok: false, reason: 'throttled', limit: 'account', retryAfterSec: expect.any(Number) });
    expect(right).toEqual(wrong);
    // The refused attempt took nothing from its address: once the budget refills, it is checked.
    expect((await login.login('long enough secret', '10.3.1.2', t0 + 6_100)).ok).toBe(true);
  });

  it("lets a browser that logged in before in while the account's budget is empty, at its own limit of five failures a minute", async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const t0 = 5_000_000;
    const known = await deviceOf(login, t0);
    for (let i = 0; i < 20; i++) await login.login(`guess ${i}`, `10.4.0.${i}`, t0 + i);
    expect(await login.login('long enough secret', '10.4.1.1', t0 + 50)).toMatchObject({ reason: 'throttled', limit: 'account' });
    // The operator's browser, even from an address the attacker used up.
    const back = await login.login('long enough secret', '10.4.0.1', t0 + 60, known);
    expect(back).toMatchObject({ ok: true, device: expect.stringMatching(/^v1\./) });
    for (let i = 0; i < 5; i++)
      expect(await login.login(`typo ${i}`, '10.4.0.1', t0 + 100 + i, known)).toEqual({ ok: false, reason: 'bad' });
    expect(await login.login('long enough secret', '10.4.0.1', t0 + 200, known)).toMatchObject({ reason: 'throttled', limit: 'browser' });
    expect((await login.login('long enough secret', '10.4.0.1', t0 + 61_000, known)).ok).toBe(true);
  });

  it('knows only the browsers it signed, for 90 days, under the same password secret', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const t0 = 9_000_000_000;
    const known = await deviceOf(login, t0);
    const [, id, issued, mac] = known.split('.');
    const samePassword = (await ConsoleLogin.create('long enough secret', 12))!; // a restart
    const newPassword = (await ConsoleLogin.create('another long secret', 12))!;
    const forged = `v1.${id}.${Number(issued) + 1}.${mac}`;
    // Each console's clock only moves forward, as in a running one.
    const cases: Array<[ConsoleLogin, string, number, string]> = [
      [samePassword, known, t0 + 1000, 'known'],
      [newPassword, known, t0 + 1000, 'unknown'],
      [login, forged, t0 + 1000, 'unknown'],
      [login, 'v1.garbage', t0 + 2000, 'unknown'],
      [login, known, t0 + 89 * 86_400_000, 'known'],
      [login, known, t0 + 91 * 86_400_000, 'unknown'],
    ];
    for (const [l, cookie, now, expected] of cases) {
      // Three checks running for strangers: the fourth slot is a known browser's only.
      const strangers = Array.from({ length: 3 }, (_, i) => l.login(`guess ${i}`, `10.5.0.${i}`, now));
      const r = await l.login('nope, wrong', '10.5.1.1', now, cookie);
      await Promise.all(strangers);
      expect(r.ok || r.reason === 'bad' ? 'known' : `unknown (${r.limit})`, `${expected} at ${now - t0}`).toBe(
        expected === 'known' ? 'known' : 'unknown (busy)',
      );
    }
  });

  it('sets an HttpOnly, SameSite=Strict cookie and reads it back', () => {
    expect(sessionCookie('abc', false)).toBe('edge_console_session=abc; Path=/; HttpOnly; SameSite=Strict');
    expect(sessionCookie('abc', true)).toContain('; Secure');
    expect(cookieValue('a=1; edge_console_session=tok; b=2', 'edge_console_session')).toBe('tok');
    expect(cookieValue(undefined, 'edge_console_session')).toBeNull();
    expect(knownBrowserCookie('v1.x', true)).toBe(
      'edge_console_device=v1.x; Path=/login; Max-Age=7776000; HttpOnly; SameSite=Strict; Secure',
    );
  });
});
