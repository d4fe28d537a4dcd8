// The clock report over a real clock store (SQLite in a temp folder): what the terminal
// remembers, judged now by the time authority's rule, shaped for people.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockReport } from '../../../src/setup/clock-report.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { ClockStore } from '../../../src/store/clock-store.js';
import { detectClock } from '../../../src/terminal/clock-sources.js';

/** The year rule and no time service: what a container or a fresh Pi says. */
const yearOnly = (wallMs: number) => detectClock({ now: wallMs, sources: [] });

describe('the clock report (queue status, doctor)', () => {
  it('a clock earlier than the latest trusted time is not trusted, with the last step seen and the anchored boots', async () => {
    const db = await openAgentDatabase(mkdtempSync(join(tmpdir(), 'clock-report-')));
    const store = await ClockStore.open(db);
    const trustedAt = Date.UTC(2026, 5, 1, 8, 2, 0);
    await db.transaction(async (tx) => {
      await store.writeJudgement(tx, {
        trusted: true,
        source: 'timedatectl',
        detail: 'yes',
        bootId: 'boot-1',
        monoMs: 1,
        lastTrustedMs: trustedAt,
      });
      await store.writeAnchor(tx, { bootId: 'boot-1', wallMs: trustedAt, monoMs: 5_000_000 });
    });
    const later = await clockReport(db, null, { detect: yearOnly, wallNow: () => trustedAt + 60_000, bootId: 'boot-1' });
    expect(later).toEqual({
      trusted: true,
      source: 'assumed',
      detail: expect.stringContaining('looks plausible'),
      lastTrustedAt: '2026-06-01T08:02:00.000Z',
      steps: 0,
      lastStep: null,
      anchoredBoots: [],
    });
    // The clock is set back ten minutes (a step the authority recorded).
    await db.transaction((tx) => store.recordStep(tx, { sizeMs: -600_000, at: trustedAt - 595_000, bootId: 'boot-1' }));
    const report = await clockReport(db, null, { detect: yearOnly, wallNow: () => trustedAt - 590_000, bootId: 'boot-1' });
    expect(report).toMatchObject({ trusted: false, source: 'seen', steps: 1, lastStep: { sizeSec: -600, at: '2026-06-01T07:52:05.000Z' } });
    // Seen from another boot, boot-1's trusted reading is an anchor its held punches are corrected from.
    expect((await clockReport(db, null, { detect: yearOnly, wallNow: () => trustedAt, bootId: 'boot-2' })).anchoredBoots).toEqual([
      'boot-1',
    ]);
    await db.close();
  });
});
