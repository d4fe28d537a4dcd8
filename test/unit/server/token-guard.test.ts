/** The token endpoint's guard in one process: per-address and per-key buckets, scrypt slots. */
import { describe, expect, it } from 'vitest';
import { type Admission, TokenGuard } from '../../../src/server/token-guard.js';

const guardAt = (options: ConstructorParameters<typeof TokenGuard>[0] = {}) =>
  new TokenGuard({
    perAddress: { burst: 100, perMinute: 100 },
    perKey: { burst: 3, perMinute: 3 },
    maxVerifying: 10,
    now: () => 0,
    ...options,
  });
const done = (a: Admission, success: boolean) => {
  if (!a.ok) throw new Error(`refused: ${a.reason}`);
  a.done(success);
};

describe('the token guard', () => {
  it('counts attempts on one key made in parallel before any secret is verified: no more pass than the bucket holds', () => {
    const guard = guardAt();
    const admissions = Array.from({ length: 5 }, (_, i) => guard.admit(`10.0.0.${i}`, 'key'));
    expect(admissions.map((a) => a.ok)).toEqual([true, true, true, false, false]);
    expect(admissions[3]).toMatchObject({ status: 429, reason: 'key', retryAfterSec: 20 });
    expect(guard.refused.key).toBe(2);
    // A right secret gives its attempt back; wrong ones keep theirs.
    done(admissions[0]!, true);
    done(admissions[1]!, false);
    done(admissions[2]!, false);
    expect(guard.admit('10.0.1.1', 'key').ok).toBe(true);
    expect(guard.admit('10.0.1.2', 'key')).toMatchObject({ ok: false, reason: 'key' });
  });

  it('one after the other: wrong secrets use the key up, right ones take nothing', () => {
    const guard = guardAt();
    for (let i = 0; i < 5; i++) done(guard.admit('10.0.0.1', 'key'), true);
    for (let i = 0; i < 3; i++) done(guard.admit('10.0.0.1', 'key'), false);
    expect(guard.admit('10.0.0.2', 'key')).toMatchObject({ ok: false, status: 429, reason: 'key' });
    expect(guard.admit('10.0.0.2', 'other').ok).toBe(true);
  });

  it('an attempt refused because every scrypt slot is busy (503) takes nothing from the key', () => {
    const guard = guardAt({ maxVerifying: 1 });
    const first = guard.admit('10.0.0.1', 'key');
    for (let i = 0; i < 5; i++)
      expect(guard.admit('10.0.0.1', 'key')).toMatchObject({ ok: false, status: 503, reason: 'busy', retryAfterSec: 1 });
    done(first, false);
    expect(guard.verifying).toBe(0);
    done(guard.admit('10.0.0.1', 'key'), false);
    done(guard.admit('10.0.0.1', 'key'), false);
    expect(guard.admit('10.0.0.1', 'key')).toMatchObject({ ok: false, reason: 'key' });
  });

  it('counts every attempt against the address, the refused ones too', () => {
    const guard = guardAt({ perAddress: { burst: 2, perMinute: 2 } });
    done(guard.admit('10.0.0.1', 'a'), true);
    expect(guard.admit('10.0.0.1', 'b').ok).toBe(true);
    expect(guard.admit('10.0.0.1', 'c')).toMatchObject({ ok: false, status: 429, reason: 'address', retryAfterSec: 30 });
    expect(guard.tracked).toEqual({ addresses: 1, keys: 2 });
  });
});
