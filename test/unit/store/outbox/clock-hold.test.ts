/**
 * The outbox (src/store/outbox/clock-hold.ts), through the `Outbox` facade: punches held for the
 * clock, their correction or release, check-outs before their check-in flagged for review.
 */
import { describe, expect, it } from 'vitest';
import { Outbox } from '../../../../src/store/outbox.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { punch } from './outbox.fixture.js';

const store = agentDatabasePerTest('outbox-');

describe('Outbox: clock hold', () => {
  it('holds unsynced punches until corrected, rewriting their time from the monotonic clock; whatever their age', async () => {
    const wall = Date.UTC(2026, 2, 1, 7, 0, 0);
    const outbox = await Outbox.open(store.db, { now: () => wall });
    const inP = await outbox.record(
      punch('A', 'in', { localTime: '1970-01-01 00:10:00', clockSynced: false, bootId: 'boot-1', monotonicMs: 100_000 }),
    );
    await outbox.record(
      punch('A', 'out', {
        localTime: '1970-01-01 00:20:00',
        inTime: '1970-01-01 00:10:00',
        inId: inP.id,
        clockSynced: false,
        bootId: 'boot-1',
        monotonicMs: 700_000,
      }),
    );
    await outbox.record(punch('B', 'in', { clockSynced: false, bootId: 'boot-2', monotonicMs: 5 }));
    await outbox.record(punch('C', 'in'));
    expect((await outbox.nextBatch('api', 10)).map((e) => e.employeeCode)).toEqual(['C']);
    expect(await outbox.status({ bootId: 'boot-1', monoNowMs: 400_000 })).toMatchObject({
      unsynced: 3,
      held: { clock: 2, earlierBoot: 1, oldestClockSec: 300, review: 0 },
    });
    // boot-2 has a trusted reading (an anchor): its punch will be corrected, it waits for no decision.
    expect((await outbox.status({ bootId: 'boot-1', anchoredBoots: ['boot-2'] })).held).toMatchObject({ clock: 3, earlierBoot: 0 });
    // Synchronized at wall 08:00:00 UTC when the monotonic clock read 1,000,000 ms.
    const n = await outbox.correctUnsynced({ bootId: 'boot-1', wallNowMs: Date.UTC(2026, 2, 1, 8, 0, 0), monoNowMs: 1_000_000 });
    expect(n).toBe(2);
    const batch = await outbox.nextBatch('api', 10);
    expect(batch.map((e) => [e.employeeCode, e.localTime, e.inTime, e.clockSynced, e.clockCorrected])).toEqual([
      ['A', '2026-03-01 08:45:00', null, false, true],
      ['C', '2026-03-01 08:00:00', null, true, false],
    ]);
    // The recording time is corrected too (the age of the backlog is right again).
    expect(batch[0]!.createdAt).toBe(Date.UTC(2026, 2, 1, 7, 45, 0));
    const out = await outbox.get((await outbox.list()).find((e) => e.direction === 'out')!.id);
    expect(out).toMatchObject({ localTime: '2026-03-01 08:55:00', inTime: '2026-03-01 08:45:00', clockCorrected: true });
    // boot-2 cannot be corrected: a year later it is still held (the hold has no age limit) ...
    expect((await outbox.nextBatch('api', 10, wall + 365 * 86_400_000)).map((e) => e.employeeCode)).not.toContain('B');
    // ... until a person releases it: it goes as it is, still marked.
    await store.db.transaction((tx) => outbox.releaseWithin(tx, { exceptBoot: 'boot-1' }));
    const released = (await outbox.nextBatch('api', 10)).find((e) => e.employeeCode === 'B');
    expect(released).toMatchObject({ clockSynced: false, clockCorrected: false, clockReleased: true, bootId: 'boot-2' });
    expect((await outbox.status({ bootId: 'boot-1' })).unsynced).toBe(0);
  });

  it("corrects the punches of an earlier boot from that boot's own anchor, in the caller's transaction", async () => {
    const outbox = await Outbox.open(store.db);
    await outbox.record(punch('A', 'in', { localTime: '2020-01-01 00:00:00', clockSynced: false, bootId: 'old', monotonicMs: 50_000 }));
    await outbox.record(
      punch('B', 'in', { localTime: '2020-01-01 00:00:00', clockSynced: false, bootId: 'never-trusted', monotonicMs: 50_000 }),
    );
    // The old boot was trusted at 09:00:00 with the monotonic clock at 20,000 ms: the punch was 30 s later.
    const n = await store.db.transaction((tx) =>
      outbox.correctWithin(tx, new Map([['old', { wallMs: Date.UTC(2026, 2, 1, 9, 0, 0), monoMs: 20_000 }]])),
    );
    expect(n).toBe(1);
    const rows = await outbox.list();
    expect(rows.map((r) => [r.employeeCode, r.localTime, r.clockCorrected])).toEqual([
      ['A', '2026-03-01 10:00:30', true],
      ['B', '2020-01-01 00:00:00', false],
    ]);
    expect(await outbox.heldBoots()).toEqual(['never-trusted']);
    // Correcting again changes nothing.
    expect(await store.db.transaction((tx) => outbox.correctWithin(tx, new Map([['old', { wallMs: 0, monoMs: 0 }]])))).toBe(0);
  });

  it('finds check-outs before their check-in and flags them for review instead of sending them', async () => {
    const outbox = await Outbox.open(store.db);
    const a = await outbox.record(punch('A', 'in', { localTime: '2026-03-01 10:00:00' }));
    await outbox.record(punch('A', 'out', { localTime: '2026-03-01 09:00:00', inTime: '2026-03-01 10:00:00', inId: a.id }));
    await outbox.record(punch('B', 'out', { localTime: '2026-03-01 17:00:00', inTime: '2026-03-01 08:00:00' }));
    await outbox.record(punch('C', 'out', { localTime: '2026-03-01 07:00:00', inTime: '2026-03-01 08:00:00' }));
    await outbox.applyResults('api', [{ seq: 1, outcome: 'delivered' }]);
    const batch = await outbox.nextBatch('api', 10);
    const problems = await outbox.orderProblems(batch);
    expect(problems.map((p) => batch.find((b) => b.seq === p.seq)!.employeeCode)).toEqual(['A', 'C']);
    expect(problems[0]!.reason).toContain('check-out at 2026-03-01 09:00:00 is before its check-in at 2026-03-01 10:00:00');
    expect(await outbox.flagForReview(problems)).toBe(2);
    expect((await outbox.list({ dead: true })).map((e) => [e.employeeCode, e.deliveries[0]!.lastStatus])).toEqual([
      ['A', 'CLOCK_ORDER'],
      ['C', 'CLOCK_ORDER'],
    ]);
    expect((await outbox.status()).held.review).toBe(2);
    expect((await outbox.nextBatch('api', 10)).map((e) => e.employeeCode)).toEqual(['B']);
  });
});
