/** The one throttle: a token bucket or a sliding window per key, counted before any await. */
import { describe, expect, it } from 'vitest';
import { Throttle, type Ticket } from '../../../src/core/throttle.js';

const waitOf = (t: Ticket) => (t.ok ? 0 : t.retryAfterSec);

describe('Throttle as a token bucket', () => {
  it('lets a burst through, then one attempt per refill, and says how long to wait', () => {
    let now = 0;
    const t = new Throttle({ rate: { burst: 3, perMinute: 6 }, now: () => now });
    expect([0, 1, 2, 3].map(() => waitOf(t.take('a')))).toEqual([0, 0, 0, 10]);
    expect(t.wait('a')).toBe(10);
    now += 9_000;
    expect(waitOf(t.take('a'))).toBe(1);
    now += 1_000;
    expect(waitOf(t.take('a'))).toBe(0);
    expect(waitOf(t.take('b'))).toBe(0);
  });

  it('refills no higher than the burst, and a refund gives back one attempt, once', () => {
    let now = 0;
    const t = new Throttle({ rate: { burst: 2, perMinute: 60 }, now: () => now });
    now += 600_000;
    const first = t.take('a');
    const second = t.take('a');
    expect(waitOf(t.take('a'))).toBe(1);
    if (!first.ok || !second.ok) throw new Error('the burst was refused');
    first.refund();
    first.refund();
    expect(waitOf(t.take('a'))).toBe(0);
    expect(waitOf(t.take('a'))).toBe(1);
  });
});

describe('Throttle as a sliding window', () => {
  it('allows max attempts in any window, then waits until the oldest leaves it', () => {
    const t = new Throttle({ rate: { max: 3, windowMs: 60_000 } });
    for (const at of [1_000, 20_000, 30_000]) expect(waitOf(t.take('a', at))).toBe(0);
    expect(waitOf(t.take('a', 40_000))).toBe(21);
    // refused attempts are not counted: the first one leaves at 61 s
    expect(waitOf(t.take('a', 61_000))).toBe(0);
    expect(waitOf(t.take('a', 61_500))).toBe(19);
  });

  it('a refund takes back that attempt only; clear forgets the key', () => {
    const t = new Throttle({ rate: { max: 2, windowMs: 60_000 } });
    const a = t.take('k', 0);
    t.take('k', 10);
    expect(t.wait('k', 20)).toBe(60);
    if (a.ok) a.refund();
    expect(t.wait('k', 20)).toBe(0);
    t.take('k', 30);
    t.clear('k');
    expect(t.wait('k', 40)).toBe(0);
  });
});

describe('Throttle keys', () => {
  it('counts attempts taken in parallel each (taken before any await), so none overwrites another', async () => {
    const t = new Throttle({ rate: { max: 5, windowMs: 60_000 } });
    const slowCheck = async (key: string) => {
      const ticket = t.take(key);
      await new Promise((r) => setTimeout(r, 10));
      return ticket.ok;
    };
    const results = await Promise.all(Array.from({ length: 8 }, () => slowCheck('10.0.0.1')));
    expect(results.filter(Boolean)).toHaveLength(5);
    expect(t.wait('10.0.0.1')).toBeGreaterThan(0);
  });

  it('remembers at most maxTracked keys, dropping the least recently used', () => {
    const t = new Throttle({ rate: { burst: 1, perMinute: 1 }, maxTracked: 2, now: () => 0 });
    t.take('a');
    t.take('b');
    t.wait('a');
    t.take('c');
    expect(t.size).toBe(2);
    // b went (least recently used): it starts again with a full bucket; a is still spent
    expect(t.wait('a')).toBe(60);
    expect(t.wait('b')).toBe(0);
  });

  it('a refund after the key was forgotten gives nothing to the key that replaced it', () => {
    const t = new Throttle({ rate: { max: 1, windowMs: 60_000 } });
    const old = t.take('k', 0);
    t.clear('k');
    t.take('k', 0);
    if (old.ok) old.refund();
    expect(t.wait('k', 1)).toBe(60);
  });
});
