import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { PunchPolicy, type PunchClock, type PunchPolicyOptions } from '../../../src/terminal/punch-policy.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox } from '../../../src/store/outbox.js';

let dir: string;
let db: SqliteDatabase;
let outbox: Outbox;
/** True time (advancing `now` is time passing: both clocks move). */
let now: number;
const START = Date.UTC(2026, 2, 2, 7, 58, 0);
/** How far the wall clock is off (a step), whether the authority trusts it, which boot, the latest trusted time. */
let wallOff: number;
let trusted: boolean;
let boot: string;
let floor: number | null;
const clock: PunchClock = {
  stamp: () => ({ wallMs: now + wallOff, monoMs: 1_000_000 + (now - START), bootId: boot, trusted }),
  lastTrustedMs: () => floor,
};

function policy(extra: Partial<PunchPolicyOptions> = {}): PunchPolicy {
  return new PunchPolicy({
    outbox,
    terminalId: 'gate-1',
    mode: 'toggle',
    timeZone: 'UTC',
    dedupeWindowSec: 60,
    dayBoundary: '04:00',
    maxShiftHours: 16,
    clock,
    ...extra,
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'policy-'));
  db = await openAgentDatabase(dir);
  outbox = await Outbox.open(db);
  now = START;
  wallOff = 0;
  trusted = true;
  boot = 'boot-1';
  floor = null;
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('PunchPolicy', () => {
  it('toggle: opens a check-in, then closes it carrying its inTime', async () => {
    const p = policy();
    const a = await p.punch({ employeeCode: '1042', source: 'finger', score: 87 });
    expect(a).toMatchObject({ recorded: true, direction: 'in', localTime: '2026-03-02 07:58:00', tzOffset: 0 });
    now += 8 * 3_600_000;
    const b = await p.punch({ employeeCode: '1042', source: 'finger' });
    expect(b).toMatchObject({ recorded: true, direction: 'out', inTime: '2026-03-02 07:58:00' });
    const stored = await outbox.get((b as { id: string }).id);
    expect(stored).toMatchObject({ inTime: '2026-03-02 07:58:00', inId: (a as { id: string }).id, terminalId: 'gate-1' });
    now += 3_600_000;
    expect(await p.punch({ employeeCode: '1042', source: 'finger' })).toMatchObject({ direction: 'in' });
  });

  it('a repeat inside the dedupe window records nothing and says so', async () => {
    const p = policy();
    const a = await p.punch({ employeeCode: '7', source: 'iris' });
    now += 30_000;
    const b = await p.punch({ employeeCode: '7', source: 'iris' });
    expect(b).toEqual({ recorded: false, reason: 'duplicate', previousId: (a as { id: string }).id, secondsAgo: 30 });
    expect((await outbox.status()).pending).toBe(1);
    // An explicit other direction is not a repeat.
    expect(await p.punch({ employeeCode: '7', source: 'manual', direction: 'out' })).toMatchObject({ recorded: true, direction: 'out' });
    now += 61_000;
    expect(await p.punch({ employeeCode: '7', source: 'iris' })).toMatchObject({ recorded: true });
  });

  it('toggle does not close a check-in older than maxShiftHours or from another working day', async () => {
    const p = policy({ maxShiftHours: 10 });
    await p.punch({ employeeCode: 'A', source: 'finger' });
    now += 11 * 3_600_000;
    expect(await p.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({ direction: 'in' });
    now = Date.UTC(2026, 2, 6); // the typed times below are in the past
    // 03:00 check-in, 05:00 punch: the 04:00 boundary started a new working day.
    await p.punch({ employeeCode: 'B', source: 'finger', at: '2026-03-05 03:00:00' });
    expect(await p.punch({ employeeCode: 'B', source: 'finger', at: '2026-03-05 05:00:00' })).toMatchObject({ direction: 'in' });
    await p.punch({ employeeCode: 'C', source: 'finger', at: '2026-03-05 04:30:00' });
    expect(await p.punch({ employeeCode: 'C', source: 'finger', at: '2026-03-05 12:00:00' })).toMatchObject({
      direction: 'out',
      inTime: '2026-03-05 04:30:00',
    });
  });

  it('modes in and out fix the direction; a check-out in out mode still carries a known inTime', async () => {
    const pin = policy({ mode: 'in' });
    await pin.punch({ employeeCode: 'A', source: 'finger' });
    now += 3_600_000;
    expect(await pin.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({ direction: 'in' });
    const pout = policy({ mode: 'out' });
    now += 3_600_000;
    expect(await pout.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({ direction: 'out', inTime: '2026-03-02 08:58:00' });
    now += 3_600_000;
    const r = await pout.punch({ employeeCode: 'Z', source: 'finger' });
    expect(r).toMatchObject({ direction: 'out' });
    expect((r as { inTime?: string }).inTime).toBeUndefined();
  });

  it('uses the terminal time zone and an explicit tzOffset, and stamps the clock state', async () => {
    trusted = false;
    const p = policy({ timeZone: 'Europe/Berlin' });
    const r = await p.punch({ employeeCode: 'A', source: 'finger' });
    expect(r).toMatchObject({ localTime: '2026-03-02 08:58:00', tzOffset: 60 });
    expect(await outbox.get((r as { id: string }).id)).toMatchObject({ clockSynced: false });
    const m = await p.punch({ employeeCode: 'B', source: 'manual', at: '2026-07-01 09:00:00', tzOffset: 120 });
    expect(m).toMatchObject({ localTime: '2026-07-01 09:00:00', tzOffset: 120 });
    expect(await outbox.get((m as { id: string }).id)).toMatchObject({ clockSynced: true, timeSource: 'manual' });
    const summer = await p.punch({ employeeCode: 'C', source: 'manual', at: '2026-07-01 09:00:00' });
    expect(summer).toMatchObject({ tzOffset: 120 });
  });

  it('a wall clock stepped back does not make an open check-in look "in the future": toggle closes it, marked untrusted', async () => {
    const p = policy();
    const a = await p.punch({ employeeCode: 'A', source: 'finger' });
    // The clock steps back an hour (the authority no longer trusts it); 8 h later the person leaves.
    wallOff = -3_600_000;
    trusted = false;
    now += 8 * 3_600_000;
    const b = await p.punch({ employeeCode: 'A', source: 'finger' });
    expect(b).toMatchObject({ recorded: true, direction: 'out', inTime: '2026-03-02 07:58:00', clockTrusted: false, timeSource: 'clock' });
    expect(await outbox.get((b as { id: string }).id)).toMatchObject({
      localTime: '2026-03-02 14:58:00',
      inId: (a as { id: string }).id,
      clockSynced: false,
      bootId: 'boot-1',
    });
    // And a repeat right after, however the wall clock moved meanwhile, is a repeat (monotonic clock).
    wallOff = 3 * 3_600_000;
    now += 10_000;
    expect(await p.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({ recorded: false, reason: 'duplicate', secondsAgo: 10 });
  });

  it('a clock far behind (2020, before synchronization) and then jumping forward: the monotonic clock decides', async () => {
    const p = policy();
    wallOff = Date.UTC(2020, 0, 1) - now;
    trusted = false;
    expect(await p.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({
      direction: 'in',
      localTime: '2020-01-01 00:00:00',
      clockTrusted: false,
    });
    now += 4 * 3_600_000;
    wallOff = 0; // synchronized: six years forward
    trusted = true;
    expect(await p.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({ direction: 'out', clockTrusted: true });
  });

  it('across a reboot with an untrusted clock, a check-in that may still be open is closed; one surely too old is not', async () => {
    const p = policy();
    await p.punch({ employeeCode: 'A', source: 'finger' });
    await p.punch({ employeeCode: 'B', source: 'finger' });
    boot = 'boot-2';
    trusted = false;
    wallOff = Date.UTC(2020, 0, 1) - now;
    now += 2 * 3_600_000;
    floor = START + 3_600_000; // the last trusted time before the power cut: at least 1 h passed
    expect(await p.punch({ employeeCode: 'A', source: 'finger' })).toMatchObject({ direction: 'out', inTime: '2026-03-02 07:58:00' });
    floor = START + 20 * 3_600_000; // at least 20 h passed: longer than a shift
    expect(await p.punch({ employeeCode: 'B', source: 'finger' })).toMatchObject({ direction: 'in' });
  });

  it('a time given by hand is marked manual, and refused when it lies in the future of a trusted clock', async () => {
    const p = policy();
    const r = await p.punch({ employeeCode: 'A', source: 'manual', at: '2026-03-02 07:00:00' });
    expect(r).toMatchObject({ recorded: true, clockTrusted: true, timeSource: 'manual' });
    await expect(p.punch({ employeeCode: 'A', source: 'manual', at: '2026-03-02 09:00:00' })).rejects.toMatchObject({
      code: 'POLICY_BAD_TIME',
      message: expect.stringContaining('in the future'),
    });
    trusted = false; // an untrusted clock cannot say what the future is
    expect(await p.punch({ employeeCode: 'B', source: 'manual', at: '2026-03-02 09:00:00' })).toMatchObject({
      recorded: true,
      timeSource: 'manual',
    });
  });

  it('rejects a missing code or a bad time with a clear error', async () => {
    const p = policy();
    await expect(p.punch({ employeeCode: ' ', source: 'manual' })).rejects.toMatchObject({ code: 'POLICY_BAD_PUNCH' });
    await expect(p.punch({ employeeCode: 'A', source: 'manual', at: '01/03/2026 08:00' })).rejects.toMatchObject({
      code: 'POLICY_BAD_TIME',
    });
    expect(() => policy({ timeZone: 'Mars/Olympus' })).toThrow(/time zone/);
  });
});

describe('PunchPolicy.present: what a person must present (policy.require)', () => {
  let mono = 0;
  const p = (require: 'either' | 'biometric' | 'badge' | 'both') => policy({ require, bothWithinSec: 15, monoNow: () => mono });
  const sourceOf = async (id: string) => (await outbox.get(id))?.source;

  it('either: a finger, an eye or a badge punches, each marked with its source; a badge again inside the dedupe window records nothing', async () => {
    const policy = p('either');
    const a = await policy.present({ employeeCode: 'A', source: 'badge', score: 1 });
    expect(a).toMatchObject({ recorded: true, direction: 'in' });
    expect(await sourceOf((a as { id: string }).id)).toBe('badge');
    expect(await policy.present({ employeeCode: 'A', source: 'badge' })).toMatchObject({ recorded: false, reason: 'duplicate' });
    const b = await policy.present({ employeeCode: 'B', source: 'iris' });
    expect(await sourceOf((b as { id: string }).id)).toBe('iris');
  });

  it('biometric: a badge is not accepted; badge: a finger is not accepted', async () => {
    expect(await p('biometric').present({ employeeCode: 'A', source: 'badge' })).toEqual({
      recorded: false,
      reason: 'not-accepted',
      detail: expect.stringContaining('not a badge'),
    });
    expect(await p('biometric').present({ employeeCode: 'A', source: 'finger' })).toMatchObject({ recorded: true });
    expect(await p('badge').present({ employeeCode: 'B', source: 'finger' })).toEqual({
      recorded: false,
      reason: 'not-accepted',
      detail: expect.stringContaining('badges only'),
    });
    expect(await p('badge').present({ employeeCode: 'B', source: 'badge' })).toMatchObject({ recorded: true });
    expect((await outbox.list()).map((e) => [e.employeeCode, e.source])).toEqual([
      ['A', 'finger'],
      ['B', 'badge'],
    ]);
  });

  it("both: a badge then the same person's finger within the window is one punch (badge+finger); a finger alone, another person's finger or a late one is not", async () => {
    const policy = p('both');
    expect(await policy.present({ employeeCode: 'A', source: 'finger' })).toEqual({
      recorded: false,
      reason: 'not-accepted',
      detail: 'present the badge first, then the finger or eye within 15 s',
    });
    expect(await policy.present({ employeeCode: 'A', source: 'badge' })).toEqual({
      recorded: false,
      reason: 'awaiting',
      awaiting: 'biometric',
      withinSec: 15,
    });
    expect(await policy.present({ employeeCode: 'B', source: 'finger' })).toMatchObject({ recorded: false, reason: 'not-accepted' });
    mono += 14_000;
    const done = await policy.present({ employeeCode: 'A', source: 'finger', score: 80 });
    expect(done).toMatchObject({ recorded: true, direction: 'in' });
    expect(await sourceOf((done as { id: string }).id)).toBe('badge+finger');
    // The badge was used up: the finger alone again is not a second punch.
    expect(await policy.present({ employeeCode: 'A', source: 'finger' })).toMatchObject({ recorded: false, reason: 'not-accepted' });
    // Too late: the badge waited 15 s at most.
    await policy.present({ employeeCode: 'C', source: 'badge' });
    mono += 15_001;
    expect(await policy.present({ employeeCode: 'C', source: 'iris' })).toMatchObject({ recorded: false, reason: 'not-accepted' });
    await policy.present({ employeeCode: 'C', source: 'badge' });
    const eye = await policy.present({ employeeCode: 'C', source: 'iris' });
    expect(await sourceOf((eye as { id: string }).id)).toBe('badge+iris');
    expect((await outbox.list()).map((e) => e.employeeCode)).toEqual(['A', 'C']);
  });

  it('a manual punch is not subject to the rule', async () => {
    expect(await p('badge').punch({ employeeCode: 'A', source: 'manual' })).toMatchObject({ recorded: true });
  });
});
