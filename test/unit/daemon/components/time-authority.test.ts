import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src/config/config.js';
import { emptySecrets } from '../../../../src/config/secrets.js';
import { Daemon } from '../../../../src/daemon/daemon.js';
import { fakeClocks, yearOnly } from '../../terminal/clocks.fixture.js';
import { MemorySink } from '../../upload/memory-sink.fixture.js';

async function until(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'time-authority-component-'));

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
