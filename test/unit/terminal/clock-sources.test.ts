import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
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
} from '../../../src/terminal/clock-sources.js';

const dir = mkdtempSync(join(tmpdir(), 'clock-sources-'));
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
