import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { PunchPolicy, type PunchPolicyOptions } from '../../../src/terminal/punch-policy.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox } from '../../../src/store/outbox.js';

let dir: string;
let db: SqliteDatabase;
let outbox: Outbox;
let now: number;

function policy(extra: Partial<PunchPolicyOptions> = {}): PunchPolicy {
  return new PunchPolicy({ outbox, terminalId: 'gate-1', mode: 'toggle', timeZone: 'UTC', dedupeWindowSec: 60, dayBoundary: '04:00', maxShiftHours: 16, now: () => now, ...extra });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'policy-'));
  db = await openAgentDatabase(dir);
  outbox = await Outbox.open(db);
  now = Date.UTC(2026, 2, 2, 7, 58, 0);
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
    // 03:00 check-in, 05:00 punch: the 04:00 boundary started a new working day.
    await p.punch({ employeeCode: 'B', source: 'finger', at: '2026-03-05 03:00:00' });
    expect(await p.punch({ employeeCode: 'B', source: 'finger', at: '2026-03-05 05:00:00' })).toMatchObject({ direction: 'in' });
    await p.punch({ employeeCode: 'C', source: 'finger', at: '2026-03-05 04:30:00' });
    expect(await p.punch({ employeeCode: 'C', source: 'finger', at: '2026-03-05 12:00:00' })).toMatchObject({ direction: 'out', inTime: '2026-03-05 04:30:00' });
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
    const p = policy({ timeZone: 'Europe/Berlin', clockSynced: () => false });
    const r = await p.punch({ employeeCode: 'A', source: 'finger' });
    expect(r).toMatchObject({ localTime: '2026-03-02 08:58:00', tzOffset: 60 });
    expect(await outbox.get((r as { id: string }).id)).toMatchObject({ clockSynced: false });
    const m = await p.punch({ employeeCode: 'B', source: 'manual', at: '2026-07-01 09:00:00', tzOffset: 120 });
    expect(m).toMatchObject({ localTime: '2026-07-01 09:00:00', tzOffset: 120 });
    expect(await outbox.get((m as { id: string }).id)).toMatchObject({ clockSynced: true });
    const summer = await p.punch({ employeeCode: 'C', source: 'manual', at: '2026-07-01 09:00:00' });
    expect(summer).toMatchObject({ tzOffset: 120 });
  });

  it('rejects a missing code or a bad time with a clear error', async () => {
    const p = policy();
    await expect(p.punch({ employeeCode: ' ', source: 'manual' })).rejects.toMatchObject({ code: 'POLICY_BAD_PUNCH' });
    await expect(p.punch({ employeeCode: 'A', source: 'manual', at: '01/03/2026 08:00' })).rejects.toMatchObject({ code: 'POLICY_BAD_TIME' });
    expect(() => policy({ timeZone: 'Mars/Olympus' })).toThrow(/time zone/);
  });
});
