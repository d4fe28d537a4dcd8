import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  chronySource,
  detectClock,
  judgeClock,
  timedatectlSource,
  timesyncdSource,
  type ClockSource,
  type ClockState,
} from '../../../src/daemon/clock.js';
import { TimeAuthority, clockReport, releaseUnsynced, type TimeAuthorityOptions } from '../../../src/daemon/time-authority.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { PunchPolicy } from '../../../src/terminal/punch-policy.js';
import { clockAlerts } from '../../../src/ops/alerts.js';
import { MemorySink } from '../upload/memory-sink.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox } from '../../../src/store/outbox.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { parseConfig } from '../../../src/config/config.js';
import { emptySecrets } from '../../../src/config/secrets.js';

async function until(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'clock-test-'));
const source = (name: string, r: boolean | null): ClockSource => ({ name, check: async () => r });

/** A small executable standing in for timedatectl/chronyc: prints `text`, exits with `code`. */
function fakeCommand(name: string, text: string, code = 0): string {
  const f = join(dir, name);
  writeFileSync(f, `#!/bin/sh\nprintf '%s' '${text}'\nexit ${code}\n`);
  chmodSync(f, 0o755);
  return f;
}

describe('clock detection', () => {
  it('never calls a clock before 2024 synchronized, whatever the sources say', async () => {
    const s = await detectClock({ now: Date.UTC(1970, 0, 1, 0, 0, 42), sources: [source('timedatectl', true)] });
    expect(s).toMatchObject({ synchronized: false, source: 'year' });
    expect(s.detail).toContain('1970-01-01T00:00:42');
  });

  it('takes the first source that can tell', async () => {
    const now = Date.UTC(2026, 5, 1);
    expect(await detectClock({ now, sources: [source('a', null), source('b', false), source('c', true)] })).toMatchObject({
      synchronized: false,
      source: 'b',
    });
    expect(await detectClock({ now, sources: [source('a', null), source('c', true)] })).toMatchObject({ synchronized: true, source: 'c' });
    const assumed = await detectClock({ now, sources: [source('a', null)] });
    expect(assumed).toMatchObject({ synchronized: true, source: 'assumed' });
  });

  it('reads timedatectl, the timesyncd flag file and chronyc', async () => {
    expect(await timedatectlSource(fakeCommand('td-yes', 'yes\n')).check()).toBe(true);
    expect(await timedatectlSource(fakeCommand('td-no', 'no\n')).check()).toBe(false);
    expect(await timedatectlSource(fakeCommand('td-fail', 'System has not been booted with systemd', 1)).check()).toBeNull();
    expect(await timedatectlSource('/nonexistent/timedatectl').check()).toBeNull();
    const flag = join(dir, 'synchronized');
    expect(await timesyncdSource(flag).check()).toBeNull();
    writeFileSync(flag, '');
    expect(await timesyncdSource(flag).check()).toBe(true);
    expect(await chronySource(fakeCommand('chrony-ok', 'Reference ID    : 0A000001\nLeap status     : Normal\n')).check()).toBe(true);
    expect(await chronySource(fakeCommand('chrony-no', 'Leap status     : Not synchronised\n')).check()).toBe(false);
  });
});

describe('judgeClock', () => {
  const synced: ClockState = { synchronized: true, source: 'timedatectl', detail: 'yes' };
  it('never trusts a clock earlier than a time already trusted, whatever the sources say', () => {
    const seen = Date.UTC(2026, 5, 1, 12);
    expect(judgeClock(synced, seen - 3_600_000, seen, 2000)).toMatchObject({
      trusted: false,
      source: 'seen',
      detail: expect.stringContaining('3600 s earlier than 2026-06-01T12:00:00.000Z'),
    });
    expect(judgeClock(synced, seen - 1000, seen, 2000)).toMatchObject({ trusted: true, source: 'timedatectl' });
    expect(judgeClock(synced, seen, null, 2000).trusted).toBe(true);
    expect(judgeClock({ synchronized: false, source: 'year', detail: '1970' }, seen, null, 2000)).toMatchObject({
      trusted: false,
      source: 'year',
    });
  });
});

/** A terminal's clocks for the authority: the true time advances both; `off` is how far the wall clock is wrong. */
function fakeClocks(start = Date.UTC(2026, 5, 1, 8, 0, 0)) {
  const c = { t: start, off: 0, mono: 5_000_000, boot: 'boot-1' };
  return {
    c,
    advance(ms: number) {
      c.t += ms;
      c.mono += ms;
    },
    wallNow: () => c.t + c.off,
    monoNow: () => c.mono,
    bootId: () => c.boot,
  };
}

async function openStore(name: string) {
  const db = await openAgentDatabase(join(dir, name));
  const outbox = await Outbox.open(db);
  return { db, outbox };
}

/** The year rule and no time service: what a container or a fresh Pi says. */
const yearOnly = (wallMs: number) => detectClock({ now: wallMs, sources: [] });

/** An authority on the fake clocks (year rule only). */
function authority(
  db: SqliteDatabase,
  outbox: TimeAuthorityOptions['outbox'],
  clocks: ReturnType<typeof fakeClocks>,
  extra: Partial<TimeAuthorityOptions> = {},
): TimeAuthority {
  return new TimeAuthority({
    db,
    outbox,
    detect: yearOnly,
    wallNow: clocks.wallNow,
    monoNow: clocks.monoNow,
    bootId: clocks.bootId,
    ...extra,
  });
}

describe('TimeAuthority', () => {
  it('a clock at 2020 jumping to now: the step is seen on the tick, nothing is claimable until the punches are corrected in the same transaction', async () => {
    const { db, outbox } = await openStore('jump');
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
    const { db, outbox } = await openStore('back');
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
    const { db, outbox } = await openStore('restart');
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
    const report = await clockReport(db, null, { detect: yearOnly, wallNow: clocks.wallNow, bootId: 'boot-1' });
    expect(report).toMatchObject({ trusted: false, source: 'seen', steps: 1, lastStep: { sizeSec: -600 } });
    await second.stop();
    await db.close();
  });

  it('after a reboot: punches of a boot that had a trusted time are corrected from it, the others are held for a decision (or sent by the rule)', async () => {
    const { db, outbox } = await openStore('reboot');
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
    const { db, outbox } = await openStore('release');
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
    const { db, outbox } = await openStore('stamp');
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
    const { db, outbox } = await openStore('retry');
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

describe('the time authority in the daemon', () => {
  it('the uploader never sends an untrusted punch, whatever its age; the punch policy and the uploader ask the same authority', async () => {
    const config = parseConfig({ dataDir: join(dir, 'daemon'), terminal: { id: 't1', mode: 'toggle' } });
    const sink = new MemorySink('api');
    const clocks = fakeClocks();
    clocks.c.off = Date.UTC(2020, 0, 1) - clocks.c.t;
    const daemon = new Daemon({
      config,
      secrets: emptySecrets(),
      sinks: [sink],
      idlePollMs: 10,
      clock: { detect: yearOnly, wallNow: clocks.wallNow, monoNow: clocks.monoNow, bootId: clocks.bootId, tickMs: 10 },
    });
    const ctx = await daemon.start();
    try {
      await ctx.policy.punch({ employeeCode: 'E1', source: 'finger' });
      // A year passes on the monotonic clock, the wall clock still wrong: nothing leaves.
      clocks.advance(365 * 86_400_000);
      clocks.c.off = Date.UTC(2020, 0, 2) - clocks.c.t;
      await new Promise((r) => setTimeout(r, 200));
      expect(sink.accepted).toEqual([]);
      clocks.c.off = 0;
      await until(async () => sink.accepted.length === 1);
      expect(sink.accepted[0]).toMatchObject({ employeeCode: 'E1', localTime: '2026-06-01 08:00:00', clockCorrected: true });
    } finally {
      await daemon.stop();
    }
  });
});
