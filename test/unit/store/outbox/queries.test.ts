/**
 * The outbox (src/store/outbox/queries.ts), through the `Outbox` facade: dead letters (listed,
 * retried, purged) and the pruning of delivered punches.
 */
import { describe, expect, it } from 'vitest';
import { Outbox } from '../../../../src/store/outbox.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { punch } from './outbox.fixture.js';

const store = agentDatabasePerTest('outbox-');

describe('Outbox: queries', () => {
  it('keeps dead letters with status and reason, retries them, purges only on request', async () => {
    const outbox = await Outbox.open(store.db);
    await outbox.record(punch('GHOST'));
    await outbox.record(punch('OK'));
    const batch = await outbox.nextBatch('api', 10);
    await outbox.applyResults('api', [
      { seq: batch[0]!.seq, outcome: 'dead', status: 'USER_NOT_AVAILABLE', error: 'user not found' },
      { seq: batch[1]!.seq, outcome: 'delivered' },
    ]);
    expect(await outbox.status()).toMatchObject({ pending: 0, dead: 1, delivered: 1 });
    const dead = await outbox.list({ dead: true });
    expect(dead).toHaveLength(1);
    expect(dead[0]!.deliveries[0]).toMatchObject({
      sink: 'api',
      state: 'dead',
      lastStatus: 'USER_NOT_AVAILABLE',
      lastError: 'user not found',
      attempts: 1,
    });
    // Dead letters never go out on their own.
    expect(await outbox.nextBatch('api', 10)).toHaveLength(0);
    expect(await outbox.retryDead()).toBe(1);
    expect(await outbox.status()).toMatchObject({ pending: 1, dead: 0 });
    const again = await outbox.nextBatch('api', 10);
    expect(again.map((e) => e.employeeCode)).toEqual(['GHOST']);
    await outbox.applyResults('api', [{ seq: again[0]!.seq, outcome: 'dead', status: 'USER_NOT_AVAILABLE', error: 'still' }]);
    expect(await outbox.purge({ dead: true })).toEqual({ dead: 1, delivered: 0 });
    expect(await outbox.status()).toMatchObject({ pending: 0, dead: 0, delivered: 1 });
  });

  it('prunes delivered punches after the retention period only', async () => {
    let now = Date.UTC(2026, 0, 1);
    const outbox = await Outbox.open(store.db, { now: () => now });
    const { seq } = await outbox.record(punch('A'));
    await outbox.record(punch('B'));
    await outbox.applyResults('api', [{ seq, outcome: 'delivered' }]);
    now += 29 * 86_400_000;
    expect(await outbox.prune(30)).toBe(0);
    now += 2 * 86_400_000;
    expect(await outbox.prune(30)).toBe(1);
    expect(await outbox.status()).toMatchObject({ pending: 1, delivered: 0 });
  });
});
