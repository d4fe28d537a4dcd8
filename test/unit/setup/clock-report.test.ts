import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockReport } from '../../../src/setup/clock-report.js';
import { authority, fakeClocks, openStore, yearOnly } from '../terminal/fake-clocks.js';

const dir = mkdtempSync(join(tmpdir(), 'clock-report-'));

describe('the clock report (queue status, doctor)', () => {
  it('judges the clock now with what the terminal remembers: a clock set back while no agent ran is not trusted, the step is shown', async () => {
    const { db, outbox } = await openStore(dir, 'restart');
    const clocks = fakeClocks();
    const first = authority(db, outbox, clocks, { tickMs: 5 });
    await first.start();
    clocks.advance(120_000);
    await first.stop();
    const before = await clockReport(db, null, { detect: yearOnly, wallNow: clocks.wallNow, bootId: 'boot-1' });
    expect(before).toMatchObject({ trusted: true, source: 'assumed', steps: 0, lastStep: null, anchoredBoots: [] });
    expect(before.lastTrustedAt).toBe('2026-06-01T08:02:00.000Z');
    // While no agent runs, the clock is set back ten minutes (plausible year, no time service).
    clocks.advance(5_000);
    clocks.c.off = -600_000;
    const second = authority(db, outbox, clocks, { tickMs: 5 });
    await second.start();
    const report = await clockReport(db, null, { detect: yearOnly, wallNow: clocks.wallNow, bootId: 'boot-1' });
    expect(report).toMatchObject({ trusted: false, source: 'seen', steps: 1, lastStep: { sizeSec: -600 } });
    // Seen from another boot, boot-1's trusted reading is an anchor its held punches are corrected from.
    expect((await clockReport(db, null, { detect: yearOnly, wallNow: clocks.wallNow, bootId: 'boot-2' })).anchoredBoots).toEqual([
      'boot-1',
    ]);
    await second.stop();
    await db.close();
  });
});
