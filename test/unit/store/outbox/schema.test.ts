/**
 * The outbox (src/store/outbox/schema.ts), through the `Outbox` facade: the migrations: outboxes of
 * older schemas keep their rows and get the new columns and counters; reopening migrates nothing
 * twice.
 */
import { describe, expect, it } from 'vitest';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import { Outbox, OUTBOX_MIGRATIONS } from '../../../../src/store/outbox.js';
import { ulid } from '../../../../src/store/ulid.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { punch } from './outbox.fixture.js';

const store = agentDatabasePerTest('outbox-');

describe('Outbox: schema', () => {
  it('migrates an outbox of the first schema: its rows keep their state and get the clock columns', async () => {
    await store.db.migrate(
      'outbox',
      OUTBOX_MIGRATIONS.filter((m) => m.version === 1),
    );
    await store.db.transaction((tx) =>
      tx.run(`INSERT INTO outbox_events (id, employee_code, direction, local_time, tz_offset, source, terminal_id, created_at, clock_synced, boot_id, monotonic_ms)
              VALUES ('X1', 'A', 'in', '2020-01-01 00:00:00', 0, 'finger', 't', 0, 0, 'b0', 7)`),
    );
    const outbox = await Outbox.open(store.db);
    expect(await outbox.list()).toMatchObject([
      { id: 'X1', clockSynced: false, clockReleased: false, timeSource: 'clock', bootId: 'b0', monotonicMs: 7 },
    ]);
  });

  it('an outbox of the first schema gets its per-sink counters from its rows', async () => {
    await store.db.migrate(
      'outbox',
      OUTBOX_MIGRATIONS.filter((m) => m.version === 1),
    );
    await store.db.transaction(async (tx) => {
      for (const [seq, state] of [
        [1, 'pending'],
        [2, 'dead'],
        [3, 'pending'],
      ] as const) {
        await tx.run(
          `INSERT INTO outbox_events (seq, id, employee_code, direction, local_time, tz_offset, source, terminal_id, created_at, clock_synced, boot_id, monotonic_ms, state)
           VALUES (?, ?, 'E', 'in', '2026-03-01 08:00:00', 60, 'manual', 't1', 0, 1, 'b', 0, ?)`,
          [seq, ulid(), state],
        );
        await tx.run('INSERT INTO outbox_deliveries (sink, seq, state) VALUES (?, ?, ?)', ['api', seq, state]);
      }
    });
    const outbox = await Outbox.open(store.db);
    expect(await outbox.status()).toMatchObject({ pending: 2, dead: 1, perSink: { api: { pending: 2, dead: 1 } } });
  });

  it('survives reopening: migrations are idempotent and counts persist', async () => {
    const outbox = await Outbox.open(store.db);
    await outbox.recordMany(Array.from({ length: 5 }, (_, i) => punch(`E${i}`)));
    await store.db.close();
    store.db = await openAgentDatabase(store.dir);
    const again = await Outbox.open(store.db);
    expect((await again.status()).pending).toBe(5);
  });
});
