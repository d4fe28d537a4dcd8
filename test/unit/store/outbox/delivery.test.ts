/**
 * The outbox (src/store/outbox/delivery.ts), through the `Outbox` facade: batches in per-employee
 * order, their outcomes, the deliveries reconciled with the configured sinks.
 */
import { describe, expect, it } from 'vitest';
import { Outbox } from '../../../../src/store/outbox.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { punch } from './outbox.fixture.js';

const store = agentDatabasePerTest('outbox-');

describe('Outbox: delivery', () => {
  it('takes batches in recording order and never passes an employee whose earlier item is backing off', async () => {
    const outbox = await Outbox.open(store.db);
    await outbox.record(punch('A', 'in'));
    await outbox.record(punch('B', 'in'));
    await outbox.record(punch('A', 'out'));
    await outbox.record(punch('C', 'in'));
    const batch = await outbox.nextBatch('api', 10, 1000);
    // One item per employee per batch: A's check-out waits for its check-in.
    expect(batch.map((b) => `${b.employeeCode}-${b.direction}`)).toEqual(['A-in', 'B-in', 'C-in']);
    // A's check-in fails for this item only: A's check-out must wait, others go.
    await outbox.applyResults(
      'api',
      [
        { seq: batch[0]!.seq, outcome: 'retry', status: 'ERROR', error: 'system error', nextAttemptAt: 5000 },
        { seq: batch[1]!.seq, outcome: 'delivered' },
      ],
      1000,
    );
    const next = await outbox.nextBatch('api', 10, 2000);
    expect(next.map((b) => `${b.employeeCode}-${b.direction}`)).toEqual(['C-in']);
    const later = await outbox.nextBatch('api', 10, 6000);
    expect(later.map((b) => `${b.employeeCode}-${b.direction}`)).toEqual(['A-in', 'C-in']);
    expect(later[0]!.attempts).toBe(1);
    await outbox.applyResults(
      'api',
      later.map((b) => ({ seq: b.seq, outcome: 'delivered' as const })),
      6000,
    );
    expect((await outbox.nextBatch('api', 10, 6000)).map((b) => `${b.employeeCode}-${b.direction}`)).toEqual(['A-out']);
  });

  it('a long run of one employee behind a backing-off item never holds another employee', async () => {
    const outbox = await Outbox.open(store.db);
    await outbox.recordMany(Array.from({ length: 3000 }, (_, i) => punch('X', i % 2 ? 'out' : 'in')));
    await outbox.record(punch('Y'));
    const [x] = await outbox.nextBatch('api', 200, 1000);
    await outbox.applyResults(
      'api',
      [{ seq: x!.seq, outcome: 'retry', status: 'ERROR', error: 'system error', nextAttemptAt: 99_000 }],
      1000,
    );
    expect((await outbox.nextBatch('api', 200, 2000)).map((e) => e.employeeCode)).toEqual(['Y']);
    expect((await outbox.nextBatch('api', 200, 100_000)).map((e) => e.employeeCode)).toEqual(['X', 'Y']);
  });

  it('with two sinks a punch is delivered only when both have it', async () => {
    const outbox = await Outbox.open(store.db, { sinks: ['api', 'mqtt'] });
    const { seq } = await outbox.record(punch('A'));
    await outbox.applyResults('api', [{ seq, outcome: 'delivered' }]);
    expect(await outbox.status()).toMatchObject({ pending: 1, delivered: 0, perSink: { api: { pending: 0 }, mqtt: { pending: 1 } } });
    expect(await outbox.nextBatch('api', 10)).toHaveLength(0);
    await outbox.applyResults('mqtt', [{ seq, outcome: 'delivered' }]);
    const st = await outbox.status();
    expect(st).toMatchObject({ pending: 0, delivered: 1 });
    expect(st.lastDeliveryAt).not.toBeNull();
  });

  it('reconciles deliveries when the configured sinks change', async () => {
    const first = await Outbox.open(store.db, { sinks: ['api'] });
    await first.record(punch('A'));
    const both = await Outbox.open(store.db, { sinks: ['api', 'mqtt'] });
    await both.reconcileSinks(['mqtt']);
    expect((await both.status()).perSink).toEqual({ api: { pending: 0, dead: 0 }, mqtt: { pending: 1, dead: 0 } });
  });

  it('remembers the reconciled sinks: a start with the same ones touches no punch, a process recording for others makes the next start look again', async () => {
    const daemon = await Outbox.open(store.db, { sinks: ['api'] });
    await daemon.record(punch('A'));
    await daemon.reconcileSinks(['api']);
    expect(await store.db.all('SELECT sink FROM outbox_sinks')).toEqual([{ sink: 'api' }]);
    // A tool configured for both upstreams records a punch with an mqtt delivery...
    const tool = await Outbox.open(store.db, { sinks: ['api', 'mqtt'] });
    await tool.record(punch('B'));
    expect(await store.db.all('SELECT sink FROM outbox_sinks')).toEqual([]);
    // ...which the daemon's next start removes again, since the remembered set was forgotten.
    await daemon.reconcileSinks(['api']);
    expect((await daemon.status()).perSink).toEqual({ api: { pending: 2, dead: 0 } });
    expect(await store.db.all("SELECT COUNT(*) AS n FROM outbox_deliveries WHERE sink = 'mqtt'")).toEqual([{ n: 0 }]);
  });
});
