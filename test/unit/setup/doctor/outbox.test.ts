import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOutbox, judgeOutbox } from '../../../../src/setup/doctor/outbox.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import type { OutboxStatus } from '../../../../src/store/outbox.js';

const status = (over: Partial<OutboxStatus>): OutboxStatus => ({
  pending: 0,
  dead: 0,
  delivered: 0,
  oldestPendingAgeSec: null,
  lastDeliveryAt: null,
  unsynced: 0,
  maxPending: 1000,
  undelivered: 0,
  capFullPercent: 0,
  capRoom: 1000,
  perSink: {},
  held: { clock: 0, earlierBoot: 0, oldestClockSec: null, review: 0 },
  ...over,
});

describe('doctor: the outbox check', () => {
  it('outbox: dead letters and an old backlog warn, a nearly full outbox fails', () => {
    const base = status({ delivered: 10 });
    expect(judgeOutbox(base).status).toBe('pass');
    expect(judgeOutbox({ ...base, dead: 2 })).toMatchObject({ status: 'warn', hint: expect.stringContaining('queue list --dead') });
    expect(judgeOutbox({ ...base, pending: 5, oldestPendingAgeSec: 7200 }).status).toBe('warn');
    expect(judgeOutbox({ ...base, pending: 950 }).status).toBe('fail');
  });

  it('fails from 90% of the cap (pending and dead together), saying where punches are refused', () => {
    expect(judgeOutbox(status({ pending: 899 })).status).toBe('pass');
    const full = judgeOutbox(status({ pending: 850, dead: 50, oldestPendingAgeSec: 600 }));
    expect(full.status).toBe('fail');
    expect(full.detail).toBe(
      '850 pending (oldest 10 min), 50 dead letter(s), 0 delivered, 0 taken before clock sync; at 1000 the terminal refuses new punches',
    );
  });

  it('a backlog older than an hour warns; younger passes', () => {
    expect(judgeOutbox(status({ pending: 1, oldestPendingAgeSec: 3600 })).status).toBe('pass');
    expect(judgeOutbox(status({ pending: 1, oldestPendingAgeSec: 3601 }))).toMatchObject({
      status: 'warn',
      hint: 'punches are not leaving: check the api-token and mqtt checks',
    });
  });

  it("reads the terminal's own database; none yet is a warning", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'doctor-outbox-'));
    expect(await checkOutbox(dir)).toMatchObject({ status: 'warn', detail: 'no database yet: no punches recorded' });
    await (await openAgentDatabase(dir)).close();
    expect(await checkOutbox(dir, { sinks: ['api'] })).toEqual({
      name: 'outbox',
      status: 'pass',
      detail: '0 pending, 0 dead letter(s), 0 delivered, 0 taken before clock sync',
      hint: null,
    });
  });
});
