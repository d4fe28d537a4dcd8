import { describe, expect, it } from 'vitest';
import { ConsoleLogin, cookieValue, sessionCookie } from '../../../src/console/login.js';
import { hashSecret } from '../../../src/core/secret-hash.js';

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
    expect(await login.login('long enough secret', '10.0.0.9', 2000)).toEqual({ ok: false, reason: 'throttled' });
    expect((await login.login('long enough secret', '10.0.0.8', 2000)).ok).toBe(true);
    expect((await login.login('long enough secret', '10.0.0.9', 62_000)).ok).toBe(true);
  });

  it('counts failed attempts made in parallel from one address each: none overwrites another', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const parallel = await Promise.all(Array.from({ length: 4 }, (_, i) => login.login(`nope ${i}`, '10.2.0.1', 1000)));
    expect(parallel).toEqual(Array.from({ length: 4 }, () => ({ ok: false, reason: 'bad' })));
    expect(await login.login('nope again', '10.2.0.1', 1001)).toEqual({ ok: false, reason: 'bad' });
    expect(await login.login('long enough secret', '10.2.0.1', 1002)).toEqual({ ok: false, reason: 'throttled' });
    expect((await login.login('long enough secret', '10.2.0.1', 61_001)).ok).toBe(true);
  });

  it('runs at most four password checks at once: more are throttled, not queued', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 12))!;
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => login.login('long enough secret', `10.1.0.${i}`)));
    expect(results.filter((r) => r.ok)).toHaveLength(4);
    expect(results.filter((r) => !r.ok && r.reason === 'throttled')).toHaveLength(2);
    expect((await login.login('long enough secret', '10.1.0.9')).ok).toBe(true);
  });

  it('sets an HttpOnly, SameSite=Strict cookie and reads it back', () => {
    expect(sessionCookie('abc', false)).toBe('edge_console_session=abc; Path=/; HttpOnly; SameSite=Strict');
    expect(sessionCookie('abc', true)).toContain('; Secure');
    expect(cookieValue('a=1; edge_console_session=tok; b=2', 'edge_console_session')).toBe('tok');
    expect(cookieValue(undefined, 'edge_console_session')).toBeNull();
  });
});
