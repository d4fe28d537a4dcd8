import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockAlerts } from '../../../src/ops/alerts.js';
import type { Outbox } from '../../../src/store/outbox.js';
import { PunchPolicy } from '../../../src/terminal/punch-policy.js';
import { releaseUnsynced } from '../../../src/terminal/time-authority.js';
import { authority, fakeClocks, openStore } from './clocks.fixture.js';

async function until(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'time-authority-'));

describe('TimeAuthority', () => {
  it('a clock at 2020 jumping to now: the step is seen on the tick, nothing is claimable until the punches are corrected in the same transaction', async () => {
    const { db, outbox } = await openStore(dir, 'jump');
    const clocks = fakeClocks();
    clocks.c.off = Date.UTC(2020, 0, 1) - clocks.c.t; // booted with a 2020 clock
    const time = authority(db, outbox, clocks, { tickMs: 5 });
    const steps: number[] = [];
    time.on('step', (s) => steps.push(s.sizeMs));
    await time.start();
    expect(time.isTrusted()).toBe(false);
    expect(time.open()).toBe(true);
    expect(time.judgement()).toMatchObject({ trusted: false, source: 'year' });
    const policy = new PunchPolicy({
      outbox,
      terminalId: 't',
      mode: 'toggle',
      timeZone: 'UTC',
      dedupeWindowSec: 60,
      dayBoundary: '04:00',
      maxShiftHours: 16,
      clock: time,
    });
    const a = await policy.punch({ employeeCode: 'A', source: 'finger' });
    clocks.advance(60_000);
    const b = await policy.punch({ employeeCode: 'B', source: 'finger' });
    expect([a, b]).toMatchObject([
      { clockTrusted: false, localTime: '2020-01-01 00:00:00' },
      { clockTrusted: false, localTime: '2020-01-01 00:01:00' },
    ]);
    expect(await outbox.nextBatch('api', 10)).toEqual([]);

    // NTP steps the clock to the true time (08:01 plus what passed).
    clocks.advance(30_000);
    clocks.c.off = 0;
    // Between the step and the judgement after it, the gate is closed and stamps are untrusted.
    expect(time.stamp().trusted).toBe(false);
    const corrected = new Promise<number>((resolve) => time.once('corrected', ({ count }) => resolve(count)));
    expect(await corrected).toBe(2);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toBeGreaterThan(6 * 365 * 86_400_000);
    await until(async () => time.isTrusted());
    const rows = await outbox.list();
    expect(rows.map((r) => [r.employeeCode, r.localTime, r.clockCorrected])).toEqual([
      ['A', '2026-06-01 08:00:00', true],
      ['B', '2026-06-01 08:01:00', true],
    ]);
    expect((await outbox.nextBatch('api', 10)).length).toBe(2);
    expect(time.metrics()).toMatchObject({
      clockTrusted: true,
      clockSynchronized: true,
      correctedPunches: 2,
      synchronizations: 1,
      clockSteps: 1,
      lastStep: { at: '2026-06-01T08:01:30.000Z' },
    });
    await time.stop();
    await db.close();
  });

  it('a backward step of an hour while trusted: untrusted until the clock passes the time already seen; punches of that hour are corrected', async () => {
    const { db, outbox } = await openStore(dir, 'back');
    const clocks = fakeClocks();
    const time = authority(db, outbox, clocks, { tickMs: 5 });
    await time.start();
    expect(time.isTrusted()).toBe(true);
    clocks.c.off = -3_600_000;
    await new Promise<void>((resolve) => time.once('change', () => resolve()));
    expect(time.judgement()).toMatchObject({ trusted: false, source: 'seen' });
    expect(time.metrics().lastStep).toMatchObject({ sizeSec: -3600 });
    const s = time.stamp();
    expect(s.trusted).toBe(false);
    await outbox.record({
      employeeCode: 'A',
      direction: 'in',
      localTime: '2026-06-01 07:00:00',
      tzOffset: 0,
      source: 'finger',
      terminalId: 't',
      clockSynced: false,
      bootId: s.bootId,
      monotonicMs: s.monoMs,
    });
    // The clock is set right again: the punch gets its true time, 08:00.
    clocks.advance(10_000);
    clocks.c.off = 0;
    const corrected = new Promise<number>((resolve) => time.once('corrected', ({ count }) => resolve(count)));
    expect(await corrected).toBe(1);
    expect((await outbox.list())[0]).toMatchObject({ localTime: '2026-06-01 08:00:00', clockCorrected: true });
    expect(time.metrics().clockSteps).toBe(2);
    await time.stop();
    await db.close();
  });

  it('remembers across a restart on the same boot: a clock set back meanwhile is a step and is not trusted', async () => {
    const { db, outbox } = await openStore(dir, 'restart');
    const clocks = fakeClocks();
    const first = authority(db, outbox, clocks, { tickMs: 5 });
    await first.start();
    clocks.advance(120_000);
    await first.stop();
    // While no agent runs, the clock is set back ten minutes (plausible year, no time service).
    clocks.advance(5_000);
    clocks.c.off = -600_000;
    const second = authority(db, outbox, clocks, { tickMs: 5 });
    await second.start();
    expect(second.judgement()).toMatchObject({ trusted: false, source: 'seen' });
    expect(second.metrics()).toMatchObject({ clockSteps: 1, lastStep: { sizeSec: -600 }, lastTrustedAt: '2026-06-01T08:02:00.000Z' });
    await second.stop();
    await db.close();
  });

  it('after a reboot: punches of a boot that had a trusted time are corrected from it, the others are held for a decision (or sent by the rule)', async () => {
    const { db, outbox } = await openStore(dir, 'reboot');
    const clocks = fakeClocks();
    const untrustedPunch = async (code: string, bootId: string, monoMs: number) =>
      outbox.record({
        employeeCode: code,
        direction: 'in',
        localTime: '2020-01-01 00:00:00',
        tzOffset: 0,
        source: 'finger',
        terminalId: 't',
        clockSynced: false,
        bootId,
        monotonicMs: monoMs,
      });
    // boot-1 was trusted at 08:00 with the monotonic clock at 5,000,000 ms, then stepped back; a punch 60 s later.
    const first = authority(db, outbox, clocks, { tickMs: 60_000 });
    await first.start();
    await first.stop();
    await untrustedPunch('A', 'boot-1', 5_060_000);
    // boot-0 never had a trusted time.
    await untrustedPunch('B', 'boot-0', 1_000);
    clocks.c.boot = 'boot-2';
    clocks.c.mono = 30_000;
    clocks.advance(3_600_000);
    const held = authority(db, outbox, clocks, { tickMs: 60_000 });
    await held.start();
    const rows = await outbox.list();
    expect(rows.map((r) => [r.employeeCode, r.localTime, r.clockCorrected, r.clockReleased])).toEqual([
      ['A', '2026-06-01 08:01:00', true, false],
      ['B', '2020-01-01 00:00:00', false, false],
    ]);
    expect((await outbox.status({ bootId: 'boot-2' })).held).toMatchObject({ clock: 0, earlierBoot: 1 });
    expect(clockAlerts({ held: (await outbox.status({ bootId: 'boot-2' })).held, holdAlertHours: 24 }).map((a) => a.code)).toEqual([
      'CLOCK_EARLIER_BOOT_HELD',
    ]);
    await held.stop();
    // The configured rule "send": released as it is, marked.
    const sender = authority(db, outbox, clocks, { earlierBootPunches: 'send' });
    await sender.start({ tick: false });
    expect(sender.metrics().releasedPunches).toBe(1);
    expect((await outbox.list()).find((r) => r.employeeCode === 'B')).toMatchObject({
      clockReleased: true,
      clockSynced: false,
      localTime: '2020-01-01 00:00:00',
    });
    await sender.stop();
    await db.close();
  });

  it('queue release-unsynced: corrects what an anchor can, releases the rest of earlier boots, and this boot only with all', async () => {
    const { db, outbox } = await openStore(dir, 'release');
    const rec = (code: string, bootId: string) =>
      outbox.record({
        employeeCode: code,
        direction: 'in',
        localTime: '2020-01-01 00:00:00',
        tzOffset: 0,
        source: 'finger',
        terminalId: 't',
        clockSynced: false,
        bootId,
        monotonicMs: 100,
      });
    await rec('OLD', 'boot-0');
    await rec('NOW', 'boot-9');
    expect(await releaseUnsynced(db, outbox, { bootId: 'boot-9' })).toEqual({ released: 1, corrected: 0 });
    expect(await releaseUnsynced(db, outbox, { bootId: 'boot-9' })).toEqual({ released: 0, corrected: 0 });
    expect(await releaseUnsynced(db, outbox, { bootId: 'boot-9', all: true })).toEqual({ released: 1, corrected: 0 });
    expect((await outbox.list()).every((r) => r.clockReleased)).toBe(true);
    await db.close();
  });

  it('a stamp right after a step is untrusted even before the next tick', async () => {
    const { db, outbox } = await openStore(dir, 'stamp');
    const clocks = fakeClocks();
    const time = authority(db, outbox, clocks, { tickMs: 60_000 });
    await time.start();
    expect(time.stamp().trusted).toBe(true);
    clocks.c.off = 3 * 3_600_000; // forward three hours
    expect(time.stamp().trusted).toBe(false);
    await new Promise<void>((resolve) => time.once('settled', () => resolve()));
    expect(time.metrics()).toMatchObject({ clockSteps: 1, lastStep: { sizeSec: 10800 } });
    await time.stop();
    await db.close();
  });

  it('a correction that failed is tried again at the next check', async () => {
    const { db, outbox } = await openStore(dir, 'retry');
    let fail = true;
    const flaky = {
      correctWithin: async (tx: Parameters<Outbox['correctWithin']>[0], anchors: Parameters<Outbox['correctWithin']>[1]) => {
        if (fail) throw new Error('SQLITE_BUSY');
        return outbox.correctWithin(tx, anchors);
      },
      releaseWithin: outbox.releaseWithin.bind(outbox),
      heldBoots: outbox.heldBoots.bind(outbox),
    };
    const clocks = fakeClocks();
    await outbox.record({
      employeeCode: 'A',
      direction: 'in',
      localTime: '2020-01-01 00:00:00',
      tzOffset: 0,
      source: 'finger',
      terminalId: 't',
      clockSynced: false,
      bootId: 'boot-1',
      monotonicMs: clocks.c.mono - 1000,
    });
    const time = authority(db, flaky, clocks, { tickMs: 60_000 });
    await time.start({ tick: false });
    expect(time.isTrusted()).toBe(true);
    expect((await outbox.status({ bootId: 'boot-1' })).unsynced).toBe(1);
    fail = false;
    await time.check();
    expect((await outbox.list())[0]).toMatchObject({ localTime: '2026-06-01 07:59:59', clockCorrected: true });
    await db.close();
  });
});
