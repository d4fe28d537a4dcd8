import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClockMonitor, chronySource, detectClock, timedatectlSource, timesyncdSource, type ClockSource, type ClockState } from '../../../src/daemon/clock.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox } from '../../../src/store/outbox.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { ClockPolicyLink } from '../../../src/daemon/components/clock.js';
import { parseConfig } from '../../../src/config/config.js';
import { emptySecrets } from '../../../src/config/secrets.js';
import type { Sink } from '../../../src/upload/sink.js';

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
    expect(await detectClock({ now, sources: [source('a', null), source('b', false), source('c', true)] })).toMatchObject({ synchronized: false, source: 'b' });
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

describe('ClockMonitor', () => {
  it('marks the state, and on synchronization corrects the punches taken before and counts them', async () => {
    const db = await openAgentDatabase(join(dir, 'data'));
    const outbox = await Outbox.open(db);
    const bootId = 'boot-1';
    const base = { employeeCode: 'E1', direction: 'in' as const, tzOffset: 0, source: 'finger' as const, terminalId: 't1', bootId };
    // Two punches before sync: the wall clock said 1970; the monotonic clock said 1000 and 5000 ms.
    await outbox.record({ ...base, localTime: '1970-01-01 00:00:01', clockSynced: false, monotonicMs: 1000 });
    await outbox.record({ ...base, employeeCode: 'E2', localTime: '1970-01-01 00:00:05', clockSynced: false, monotonicMs: 5000 });
    await outbox.record({ ...base, employeeCode: 'E3', localTime: '2026-06-01 08:00:00', clockSynced: true, monotonicMs: 6000 });

    let state: ClockState = { synchronized: false, source: 'year', detail: '1970' };
    const changes: boolean[] = [];
    const monitor = new ClockMonitor({ outbox, detect: async () => state, bootId: () => bootId, wallNow: () => Date.UTC(2026, 5, 1, 8, 0, 10), monoNow: () => 10_000, unsyncedIntervalMs: 10 });
    monitor.on('change', (s) => changes.push(s.synchronized));
    await monitor.start();
    expect(monitor.isSynchronized()).toBe(false);
    expect((await outbox.status()).unsynced).toBe(2);

    state = { synchronized: true, source: 'timedatectl', detail: 'yes' };
    const corrected = new Promise<number>((resolve) => monitor.once('corrected', ({ count }) => resolve(count)));
    expect(await corrected).toBe(2); // the monitor's own timer found the change
    expect(monitor.isSynchronized()).toBe(true);
    expect(monitor.metrics()).toEqual({ clockSynchronized: true, clockSource: 'timedatectl', correctedPunches: 2, synchronizations: 1 });
    expect(changes).toEqual([false, true]);
    await monitor.stop();

    const events = await outbox.list();
    const times = Object.fromEntries(events.map((e) => [e.employeeCode, e.localTime]));
    // wallNow − (monoNow − monoAtPunch): 08:00:10 − 9 s and − 5 s
    expect(times).toEqual({ E1: '2026-06-01 08:00:01', E2: '2026-06-01 08:00:05', E3: '2026-06-01 08:00:00' });
    expect((await outbox.status()).unsynced).toBe(0);
    await db.close();
  });

  it('retries a correction that failed', async () => {
    let fail = true;
    let calls = 0;
    const outbox = {
      correctUnsynced: async () => {
        calls++;
        if (fail) throw new Error('SQLITE_BUSY');
        return 3;
      },
    };
    const monitor = new ClockMonitor({ outbox, detect: async () => ({ synchronized: true, source: 't', detail: '' }) });
    await monitor.check();
    expect(monitor.metrics().correctedPunches).toBe(0);
    fail = false;
    await monitor.check();
    expect(calls).toBe(2);
    expect(monitor.metrics().correctedPunches).toBe(3);
    await monitor.check();
    expect(calls).toBe(2);
  });
});

describe('ClockMonitor in the daemon', () => {
  it('the punch policy marks punches while the clock is not synchronized, and they are corrected once it is', async () => {
    const config = parseConfig({ dataDir: join(dir, 'daemon'), terminal: { id: 't1' } });
    // A sink that never takes anything, so the punches stay in the outbox to be looked at.
    const sink: Sink = { name: 'api', deliver: async (items) => items.map(() => ({ outcome: 'retry' as const, description: 'held by the test' })), close: async () => undefined };
    let synced = false;
    const clock = new ClockMonitor({ detect: async () => ({ synchronized: synced, source: 'test', detail: '' }) });
    // The daemon links the clock to the punch policy only through ClockPolicyLink (as `edge-agent run` does).
    const daemon = new Daemon({ config, secrets: emptySecrets(), sinks: [sink] }).use(clock).use(new ClockPolicyLink(clock));
    const ctx = await daemon.start();
    try {
      await ctx.policy.punch({ employeeCode: 'E1', source: 'finger' });
      expect((await ctx.outbox.status()).unsynced).toBe(1);
      synced = true;
      await clock.check();
      await ctx.policy.punch({ employeeCode: 'E2', source: 'finger' });
      expect((await ctx.outbox.status()).unsynced).toBe(0);
      expect(clock.metrics().correctedPunches).toBe(1);
    } finally {
      await daemon.stop();
    }
  });
});
