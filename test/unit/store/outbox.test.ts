import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentError } from '../../../src/core/errors.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox, OUTBOX_MIGRATIONS, type PunchInput } from '../../../src/store/outbox.js';
import { derivedUlid, ulid, ULID_RE, ulidTime } from '../../../src/store/ulid.js';

let dir: string;
let db: SqliteDatabase;

function punch(code: string, direction: 'in' | 'out' = 'in', extra: Partial<PunchInput> = {}): PunchInput {
  return { employeeCode: code, direction, localTime: '2026-03-01 08:00:00', tzOffset: 60, source: 'manual', terminalId: 't1', ...extra };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-'));
  db = await openAgentDatabase(dir);
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ulid', () => {
  it('sorts by time and stays monotonic inside one millisecond', () => {
    const ids = Array.from({ length: 500 }, () => ulid(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(500);
    expect(ulidTime(ids[0]!)).toBe(1_700_000_000_000);
    expect(ulid(1_700_000_000_001) > ids[499]!).toBe(true);
  });

  it('derives the same id from the same time and key, another from another key', () => {
    const a = derivedUlid(1_772_348_400_000, 'sha256:ab:1');
    expect(a).toMatch(ULID_RE);
    expect(derivedUlid(1_772_348_400_000, 'sha256:ab:1')).toBe(a);
    expect(derivedUlid(1_772_348_400_000, 'sha256:ab:2')).not.toBe(a);
    expect(ulidTime(a)).toBe(1_772_348_400_000);
    expect(derivedUlid(-5, 'k').slice(0, 10)).toBe('0000000000');
  });
});

describe('Outbox', () => {
  it('records a punch durably: a second connection sees it after record() resolves', async () => {
    const outbox = await Outbox.open(db);
    const { id } = await outbox.record(punch('E1'));
    const other = await openAgentDatabase(dir);
    const row = await other.get<{ id: string; state: string }>('SELECT id, state FROM outbox_events WHERE id = ?', [id]);
    await other.close();
    expect(row).toEqual({ id, state: 'pending' });
    const st = await outbox.status();
    expect(st).toMatchObject({ pending: 1, dead: 0, delivered: 0, perSink: { api: { pending: 1, dead: 0 } } });
    expect(st.oldestPendingAgeSec).toBeGreaterThanOrEqual(0);
  });

  it('refuses bad punches with a clear error and records nothing', async () => {
    const outbox = await Outbox.open(db);
    await expect(outbox.record(punch('E1', 'in', { localTime: '2026-13-01 08:00:00' }))).rejects.toMatchObject({ code: 'STORE_BAD_TIME' });
    await expect(outbox.record(punch(''))).rejects.toMatchObject({ code: 'STORE_BAD_PUNCH' });
    expect((await outbox.status()).pending).toBe(0);
  });

  it('refuses new punches at the cap with STORE_OUTBOX_FULL and drops nothing recorded', async () => {
    const outbox = await Outbox.open(db, { maxPending: 3 });
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
    const outbox = await Outbox.open(db, { maxPending: 25 });
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
    const outbox = await Outbox.open(db, { maxPending: 30 });
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

  it('takes batches in recording order and never passes an employee whose earlier item is backing off', async () => {
    const outbox = await Outbox.open(db);
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
    const outbox = await Outbox.open(db);
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

  it('keeps dead letters with status and reason, retries them, purges only on request', async () => {
    const outbox = await Outbox.open(db);
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

  it('with two sinks a punch is delivered only when both have it', async () => {
    const outbox = await Outbox.open(db, { sinks: ['api', 'mqtt'] });
    const { seq } = await outbox.record(punch('A'));
    await outbox.applyResults('api', [{ seq, outcome: 'delivered' }]);
    expect(await outbox.status()).toMatchObject({ pending: 1, delivered: 0, perSink: { api: { pending: 0 }, mqtt: { pending: 1 } } });
    expect(await outbox.nextBatch('api', 10)).toHaveLength(0);
    await outbox.applyResults('mqtt', [{ seq, outcome: 'delivered' }]);
    const st = await outbox.status();
    expect(st).toMatchObject({ pending: 0, delivered: 1 });
    expect(st.lastDeliveryAt).not.toBeNull();
  });

  it('prunes delivered punches after the retention period only', async () => {
    let now = Date.UTC(2026, 0, 1);
    const outbox = await Outbox.open(db, { now: () => now });
    const { seq } = await outbox.record(punch('A'));
    await outbox.record(punch('B'));
    await outbox.applyResults('api', [{ seq, outcome: 'delivered' }]);
    now += 29 * 86_400_000;
    expect(await outbox.prune(30)).toBe(0);
    now += 2 * 86_400_000;
    expect(await outbox.prune(30)).toBe(1);
    expect(await outbox.status()).toMatchObject({ pending: 1, delivered: 0 });
  });

  it('holds unsynced punches until corrected, rewriting their time from the monotonic clock; whatever their age', async () => {
    const wall = Date.UTC(2026, 2, 1, 7, 0, 0);
    const outbox = await Outbox.open(db, { now: () => wall });
    const inP = await outbox.record(
      punch('A', 'in', { localTime: '1970-01-01 00:10:00', clockSynced: false, bootId: 'boot-1', monotonicMs: 100_000 }),
    );
    await outbox.record(
      punch('A', 'out', {
        localTime: '1970-01-01 00:20:00',
        inTime: '1970-01-01 00:10:00',
        inId: inP.id,
        clockSynced: false,
        bootId: 'boot-1',
        monotonicMs: 700_000,
      }),
    );
    await outbox.record(punch('B', 'in', { clockSynced: false, bootId: 'boot-2', monotonicMs: 5 }));
    await outbox.record(punch('C', 'in'));
    expect((await outbox.nextBatch('api', 10)).map((e) => e.employeeCode)).toEqual(['C']);
    expect(await outbox.status({ bootId: 'boot-1', monoNowMs: 400_000 })).toMatchObject({
      unsynced: 3,
      held: { clock: 2, earlierBoot: 1, oldestClockSec: 300, review: 0 },
    });
    // boot-2 has a trusted reading (an anchor): its punch will be corrected, it waits for no decision.
    expect((await outbox.status({ bootId: 'boot-1', anchoredBoots: ['boot-2'] })).held).toMatchObject({ clock: 3, earlierBoot: 0 });
    // Synchronized at wall 08:00:00 UTC when the monotonic clock read 1,000,000 ms.
    const n = await outbox.correctUnsynced({ bootId: 'boot-1', wallNowMs: Date.UTC(2026, 2, 1, 8, 0, 0), monoNowMs: 1_000_000 });
    expect(n).toBe(2);
    const batch = await outbox.nextBatch('api', 10);
    expect(batch.map((e) => [e.employeeCode, e.localTime, e.inTime, e.clockSynced, e.clockCorrected])).toEqual([
      ['A', '2026-03-01 08:45:00', null, false, true],
      ['C', '2026-03-01 08:00:00', null, true, false],
    ]);
    // The recording time is corrected too (the age of the backlog is right again).
    expect(batch[0]!.createdAt).toBe(Date.UTC(2026, 2, 1, 7, 45, 0));
    const out = await outbox.get((await outbox.list()).find((e) => e.direction === 'out')!.id);
    expect(out).toMatchObject({ localTime: '2026-03-01 08:55:00', inTime: '2026-03-01 08:45:00', clockCorrected: true });
    // boot-2 cannot be corrected: a year later it is still held (the hold has no age limit) ...
    expect((await outbox.nextBatch('api', 10, wall + 365 * 86_400_000)).map((e) => e.employeeCode)).not.toContain('B');
    // ... until a person releases it: it goes as it is, still marked.
    await db.transaction((tx) => outbox.releaseWithin(tx, { exceptBoot: 'boot-1' }));
    const released = (await outbox.nextBatch('api', 10)).find((e) => e.employeeCode === 'B');
    expect(released).toMatchObject({ clockSynced: false, clockCorrected: false, clockReleased: true, bootId: 'boot-2' });
    expect((await outbox.status({ bootId: 'boot-1' })).unsynced).toBe(0);
  });

  it("corrects the punches of an earlier boot from that boot's own anchor, in the caller's transaction", async () => {
    const outbox = await Outbox.open(db);
    await outbox.record(punch('A', 'in', { localTime: '2020-01-01 00:00:00', clockSynced: false, bootId: 'old', monotonicMs: 50_000 }));
    await outbox.record(
      punch('B', 'in', { localTime: '2020-01-01 00:00:00', clockSynced: false, bootId: 'never-trusted', monotonicMs: 50_000 }),
    );
    // The old boot was trusted at 09:00:00 with the monotonic clock at 20,000 ms: the punch was 30 s later.
    const n = await db.transaction((tx) =>
      outbox.correctWithin(tx, new Map([['old', { wallMs: Date.UTC(2026, 2, 1, 9, 0, 0), monoMs: 20_000 }]])),
    );
    expect(n).toBe(1);
    const rows = await outbox.list();
    expect(rows.map((r) => [r.employeeCode, r.localTime, r.clockCorrected])).toEqual([
      ['A', '2026-03-01 10:00:30', true],
      ['B', '2020-01-01 00:00:00', false],
    ]);
    expect(await outbox.heldBoots()).toEqual(['never-trusted']);
    // Correcting again changes nothing.
    expect(await db.transaction((tx) => outbox.correctWithin(tx, new Map([['old', { wallMs: 0, monoMs: 0 }]])))).toBe(0);
  });

  it('finds check-outs before their check-in and flags them for review instead of sending them', async () => {
    const outbox = await Outbox.open(db);
    const a = await outbox.record(punch('A', 'in', { localTime: '2026-03-01 10:00:00' }));
    await outbox.record(punch('A', 'out', { localTime: '2026-03-01 09:00:00', inTime: '2026-03-01 10:00:00', inId: a.id }));
    await outbox.record(punch('B', 'out', { localTime: '2026-03-01 17:00:00', inTime: '2026-03-01 08:00:00' }));
    await outbox.record(punch('C', 'out', { localTime: '2026-03-01 07:00:00', inTime: '2026-03-01 08:00:00' }));
    await outbox.applyResults('api', [{ seq: 1, outcome: 'delivered' }]);
    const batch = await outbox.nextBatch('api', 10);
    const problems = await outbox.orderProblems(batch);
    expect(problems.map((p) => batch.find((b) => b.seq === p.seq)!.employeeCode)).toEqual(['A', 'C']);
    expect(problems[0]!.reason).toContain('check-out at 2026-03-01 09:00:00 is before its check-in at 2026-03-01 10:00:00');
    expect(await outbox.flagForReview(problems)).toBe(2);
    expect((await outbox.list({ dead: true })).map((e) => [e.employeeCode, e.deliveries[0]!.lastStatus])).toEqual([
      ['A', 'CLOCK_ORDER'],
      ['C', 'CLOCK_ORDER'],
    ]);
    expect((await outbox.status()).held.review).toBe(2);
    expect((await outbox.nextBatch('api', 10)).map((e) => e.employeeCode)).toEqual(['B']);
  });

  it('migrates an outbox of the first schema: its rows keep their state and get the clock columns', async () => {
    await db.migrate(
      'outbox',
      OUTBOX_MIGRATIONS.filter((m) => m.version === 1),
    );
    await db.transaction((tx) =>
      tx.run(`INSERT INTO outbox_events (id, employee_code, direction, local_time, tz_offset, source, terminal_id, created_at, clock_synced, boot_id, monotonic_ms)
              VALUES ('X1', 'A', 'in', '2020-01-01 00:00:00', 0, 'finger', 't', 0, 0, 'b0', 7)`),
    );
    const outbox = await Outbox.open(db);
    expect(await outbox.list()).toMatchObject([
      { id: 'X1', clockSynced: false, clockReleased: false, timeSource: 'clock', bootId: 'b0', monotonicMs: 7 },
    ]);
  });

  it('reconciles deliveries when the configured sinks change', async () => {
    const first = await Outbox.open(db, { sinks: ['api'] });
    await first.record(punch('A'));
    const both = await Outbox.open(db, { sinks: ['api', 'mqtt'] });
    await both.reconcileSinks(['mqtt']);
    expect((await both.status()).perSink).toEqual({ api: { pending: 0, dead: 0 }, mqtt: { pending: 1, dead: 0 } });
  });

  it('remembers the reconciled sinks: a start with the same ones touches no punch, a process recording for others makes the next start look again', async () => {
    const daemon = await Outbox.open(db, { sinks: ['api'] });
    await daemon.record(punch('A'));
    await daemon.reconcileSinks(['api']);
    expect(await db.all('SELECT sink FROM outbox_sinks')).toEqual([{ sink: 'api' }]);
    // A tool configured for both upstreams records a punch with an mqtt delivery...
    const tool = await Outbox.open(db, { sinks: ['api', 'mqtt'] });
    await tool.record(punch('B'));
    expect(await db.all('SELECT sink FROM outbox_sinks')).toEqual([]);
    // ...which the daemon's next start removes again, since the remembered set was forgotten.
    await daemon.reconcileSinks(['api']);
    expect((await daemon.status()).perSink).toEqual({ api: { pending: 2, dead: 0 } });
    expect(await db.all("SELECT COUNT(*) AS n FROM outbox_deliveries WHERE sink = 'mqtt'")).toEqual([{ n: 0 }]);
  });

  it('an outbox of the first schema gets its per-sink counters from its rows', async () => {
    await db.migrate(
      'outbox',
      OUTBOX_MIGRATIONS.filter((m) => m.version === 1),
    );
    await db.transaction(async (tx) => {
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
    const outbox = await Outbox.open(db);
    expect(await outbox.status()).toMatchObject({ pending: 2, dead: 1, perSink: { api: { pending: 2, dead: 1 } } });
  });

  it('a full disk refuses the punch with SQLITE_DISK_FULL and keeps everything recorded before', async () => {
    const outbox = await Outbox.open(db);
    await outbox.record(punch('A'));
    const pages = (await db.all<{ page_count: number }>('PRAGMA page_count'))[0]!.page_count;
    await db.exec(`PRAGMA max_page_count = ${pages}`); // the file may not grow: as if the disk were full
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
    await db.exec('PRAGMA max_page_count = 1073741823'); // space freed
    await outbox.record(punch('AFTER'));
    expect((await outbox.status()).pending).toBe(before + 1);
  });

  it('survives reopening: migrations are idempotent and counts persist', async () => {
    const outbox = await Outbox.open(db);
    await outbox.recordMany(Array.from({ length: 5 }, (_, i) => punch(`E${i}`)));
    await db.close();
    db = await openAgentDatabase(dir);
    const again = await Outbox.open(db);
    expect((await again.status()).pending).toBe(5);
  });
});
