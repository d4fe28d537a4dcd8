/**
 * The outbox (src/store/outbox/recording.ts), through the `Outbox` facade: recording punches: one
 * in one transaction, an import in chunks, the size cap, a full disk.
 */
import { describe, expect, it } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';
import { Outbox } from '../../../../src/store/outbox.js';
import { derivedUlid } from '../../../../src/store/ulid.js';
import { agentDatabasePerTest } from '../agent-db.fixture.js';
import { punch } from './outbox.fixture.js';

const store = agentDatabasePerTest('outbox-');

describe('Outbox: recording', () => {
  it('records a punch durably: a second connection sees it after record() resolves', async () => {
    const outbox = await Outbox.open(store.db);
    const { id } = await outbox.record(punch('E1'));
    const other = await openAgentDatabase(store.dir);
    const row = await other.get<{ id: string; state: string }>('SELECT id, state FROM outbox_events WHERE id = ?', [id]);
    await other.close();
    expect(row).toEqual({ id, state: 'pending' });
    const st = await outbox.status();
    expect(st).toMatchObject({ pending: 1, dead: 0, delivered: 0, perSink: { api: { pending: 1, dead: 0 } } });
    expect(st.oldestPendingAgeSec).toBeGreaterThanOrEqual(0);
  });

  it('refuses bad punches with a clear error and records nothing', async () => {
    const outbox = await Outbox.open(store.db);
    await expect(outbox.record(punch('E1', 'in', { localTime: '2026-13-01 08:00:00' }))).rejects.toMatchObject({ code: 'STORE_BAD_TIME' });
    await expect(outbox.record(punch(''))).rejects.toMatchObject({ code: 'STORE_BAD_PUNCH' });
    expect((await outbox.status()).pending).toBe(0);
  });

  it('refuses new punches at the cap with STORE_OUTBOX_FULL and drops nothing recorded', async () => {
    const outbox = await Outbox.open(store.db, { maxPending: 3 });
    for (const c of ['A', 'B', 'C']) await outbox.record(punch(c));
    const err = await outbox.record(punch('D')).catch((e: unknown) => e);
    expect(isAgentError(err, 'STORE_OUTBOX_FULL')).toBe(true);
    expect((err as { hint: string }).hint).toMatch(/queue/);
    expect((await outbox.list()).map((e) => e.employeeCode)).toEqual(['A', 'B', 'C']);
    // Delivering one makes room again.
    const [first] = await outbox.nextBatch('api', 1);
    await outbox.applyResults('api', [{ seq: first!.seq, outcome: 'delivered' }]);
    await outbox.record(punch('D'));
    expect((await outbox.status()).pending).toBe(3);
  });

  it('recordMany checks the cap for the whole list before writing anything', async () => {
    const outbox = await Outbox.open(store.db, { maxPending: 25 });
    await outbox.record(punch('FIRST'));
    const many = Array.from({ length: 30 }, (_, i) => punch(`E${i}`));
    const err = await outbox.recordMany(many, 10).catch((e: unknown) => e);
    expect(isAgentError(err, 'STORE_OUTBOX_FULL')).toBe(true);
    expect((err as { context: Record<string, number> }).context).toMatchObject({ recorded: 0, adding: 30, undelivered: 1, room: 24 });
    expect((err as { hint: string }).hint).toMatch(/at most 24/);
    expect((await outbox.status()).pending).toBe(1);
    // What fits goes in, in chunks, in order, each with its delivery row.
    const { ids } = await outbox.recordMany(many.slice(0, 24), 10);
    expect(ids).toHaveLength(24);
    const st = await outbox.status();
    expect(st).toMatchObject({ pending: 25, undelivered: 25, capRoom: 0, capFullPercent: 100, perSink: { api: { pending: 25, dead: 0 } } });
    expect((await outbox.list({ limit: 30 })).map((e) => e.employeeCode)).toEqual([
      'FIRST',
      ...many.slice(0, 24).map((p) => p.employeeCode),
    ]);
    expect((await outbox.get(ids[23]!))!.deliveries.map((d) => d.sink)).toEqual(['api']);
  });

  it('recordMany skips punches whose given id is recorded, counting them, and they take no room under the cap', async () => {
    const outbox = await Outbox.open(store.db, { maxPending: 30 });
    const many = Array.from({ length: 25 }, (_, i) => punch(`E${i}`, 'in', { id: derivedUlid(1_772_348_400_000 + i, `imp:${i + 1}`) }));
    expect(await outbox.recordMany(many.slice(0, 10), 4)).toMatchObject({ skipped: 0 });
    const again = await outbox.recordMany(many, 4);
    expect(again.skipped).toBe(10);
    expect(again.ids).toEqual(many.slice(10).map((p) => p.id));
    expect((await outbox.status()).pending).toBe(25);
    // Nothing new: 25 already there and a cap of 30 is no obstacle.
    expect(await outbox.recordMany(many, 25)).toEqual({ ids: [], skipped: 25 });
    await expect(outbox.record(many[0]!)).rejects.toMatchObject({ code: 'STORE_BAD_PUNCH' });
    await expect(outbox.record(punch('X', 'in', { id: 'not-a-ulid' }))).rejects.toMatchObject({ code: 'STORE_BAD_PUNCH' });
    expect((await outbox.status()).pending).toBe(25);
  });

  it('a full disk refuses the punch with SQLITE_DISK_FULL and keeps everything recorded before', async () => {
    const outbox = await Outbox.open(store.db);
    await outbox.record(punch('A'));
    const pages = (await store.db.all<{ page_count: number }>('PRAGMA page_count'))[0]!.page_count;
    await store.db.exec(`PRAGMA max_page_count = ${pages}`); // the file may not grow: as if the disk were full
    let err: unknown = null;
    for (let i = 0; i < 500 && !err; i++)
      err = await outbox.record(punch(`F${i}`)).then(
        () => null,
        (e: unknown) => e,
      );
    expect(isAgentError(err, 'SQLITE_DISK_FULL')).toBe(true);
    expect((err as { hint: string; retryable: boolean }).hint).toMatch(/free space/);
    expect((err as { retryable: boolean }).retryable).toBe(true);
    const before = (await outbox.status()).pending;
    expect((await outbox.list({ limit: 1000 }))[0]!.employeeCode).toBe('A');
    await store.db.exec('PRAGMA max_page_count = 1073741823'); // space freed
    await outbox.record(punch('AFTER'));
    expect((await outbox.status()).pending).toBe(before + 1);
  });
});
