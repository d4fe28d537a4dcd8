import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src/config/config.js';
import { checkClock, checkClockFigures } from '../../../../src/setup/doctor/clock.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';

const synchronized = async () => ({ synchronized: true, source: 'timedatectl', detail: 'System clock synchronized: yes' });

describe('doctor: the clock check', () => {
  it("without the terminal's database: the time services alone, and no figures", async () => {
    const config = parseConfig({ dataDir: join(mkdtempSync(join(tmpdir(), 'doctor-clock-')), 'none-yet') });
    expect(await checkClockFigures(synchronized, config)).toEqual({
      result: { name: 'clock', status: 'pass', detail: 'System clock synchronized: yes', hint: null },
    });
    const unsynced = await checkClock(async () => ({ synchronized: false, source: 'year', detail: 'the year is 1970' }), { config });
    expect(unsynced.detail).toBe('the year is 1970; punches are marked and corrected once it synchronizes, nothing is lost');
    expect(unsynced.hint).toContain('timedatectl timesync-status');
  });

  it("with the terminal's database: the time authority's judgement and its figures", async () => {
    const config = parseConfig({ dataDir: mkdtempSync(join(tmpdir(), 'doctor-clock-')) });
    await (await openAgentDatabase(config.dataDir)).close();
    const { result, figures } = await checkClockFigures(synchronized, config);
    expect(result.status).toBe('pass');
    expect(result.detail).toMatch(
      /^trusted: .*; 0 punch\(es\) held for the clock, 0 of an earlier boot waiting for a decision, 0 for review; no step seen$/,
    );
    expect(figures).toMatchObject({ trusted: true, source: 'timedatectl', steps: 0, lastStep: null, alerts: [] });
  });
});
