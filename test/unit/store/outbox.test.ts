/**
 * Recording a batch's outcomes must cost O(items) whatever the backlog: every statement the outbox
 * runs for a batch (record, import, outcomes, whole-request failures, check-outs kept back for
 * review, correction of held punches, retry of named dead letters, a start with the same sinks) is captured while it runs and its plan (`EXPLAIN QUERY PLAN`) must
 * find the deliveries and the events by seq (or id), never by scanning the backlog. SQLite plans
 * without statistics here (no ANALYZE), so the plans do not depend on the data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Params, SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox, type PunchInput } from '../../../src/store/outbox.js';

let dir: string;
let db: SqliteDatabase;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-plans-'));
  db = await openAgentDatabase(dir);
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

function punch(code: string): PunchInput {
  return { employeeCode: code, direction: 'in', localTime: '2026-03-01 08:00:00', tzOffset: 60, source: 'manual', terminalId: 't1' };
}

interface Captured {
  sql: string;
  params: Params;
}

/** Records every statement `db` runs while `fn` runs (transactions run on the same object). */
async function capture(fn: () => Promise<unknown>): Promise<Captured[]> {
  const seen: Captured[] = [];
  const target = db as unknown as Record<'run' | 'get' | 'all', (sql: string, params?: Params) => Promise<unknown>>;
  const originals = { run: target.run, get: target.get, all: target.all };
  for (const name of ['run', 'get', 'all'] as const) {
    target[name] = (sql: string, params: Params = []) => {
      seen.push({ sql, params });
      return originals[name].call(db, sql, params);
    };
  }
  try {
    await fn();
  } finally {
    Object.assign(target, originals);
  }
  return seen;
}

/** The table a plan line reads (`SCAN d`, `SEARCH outbox_events USING ...`), by name or by this file's aliases. */
function tableOf(detail: string): 'deliveries' | 'events' | 'other' {
  const t = /^(?:SCAN|SEARCH) (\S+)/.exec(detail)?.[1];
  if (t === 'outbox_deliveries' || t === 'd') return 'deliveries';
  if (t === 'outbox_events' || t === 'e') return 'events';
  return 'other';
}

/** Plan lines that read the backlog instead of the batch's rows. */
function backlogReads(plan: string[]): string[] {
  return plan.filter((detail) => {
    const table = tableOf(detail);
    if (table === 'other') return false;
    if (detail.startsWith('SCAN')) return true;
    // `SEARCH t` alone is SQLite's min/max optimization: one step down the b-tree.
    if (/^SEARCH \S+$/.test(detail)) return false;
    // The partial index of held punches holds those only (none once the clock is trusted).
    if (detail.includes('USING INDEX outbox_events_unsynced ')) return false;
    return !/\b(seq|rowid|id|in_id)[=>]\?/.test(detail);
  });
}

async function planOf(c: Captured): Promise<string[]> {
  const rows = await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${c.sql}`, c.params);
  return rows.map((r) => r.detail);
}

async function expectNoBacklogReads(statements: Captured[]): Promise<void> {
  expect(statements.length).toBeGreaterThan(0);
  const offenders: string[] = [];
  for (const c of statements) {
    if (/^\s*(BEGIN|COMMIT|ROLLBACK)/i.test(c.sql)) continue;
    const bad = backlogReads(await planOf(c));
    if (bad.length) offenders.push(`${c.sql.replace(/\s+/g, ' ')}\n    -> ${bad.join('; ')}`);
  }
  expect(offenders).toEqual([]);
}

describe('outbox statements of a batch find their rows by seq', () => {
  it('the check catches the scan that made a backlog drain at one punch a second', async () => {
    await Outbox.open(db);
    // The statement of the first release: SQLite drove it from the pending rows of the sink.
    const old = `UPDATE outbox_deliveries AS d SET state = 'dead', attempts = d.attempts + 1, last_status = j.status, last_error = j.error
      FROM (SELECT value ->> 'seq' AS seq, value ->> 'status' AS status, value ->> 'error' AS error FROM json_each(?)) AS j
      WHERE d.sink = ? AND d.state = 'pending' AND d.seq = j.seq`;
    expect(backlogReads(await planOf({ sql: old, params: ['[]', 'api'] }))).not.toEqual([]);
    expect(backlogReads(await planOf({ sql: 'SELECT COUNT(*) FROM outbox_deliveries WHERE sink = ?', params: ['api'] }))).not.toEqual([]);
  });

  it('one sink: record, import, outcomes (delivered, dead, retry), failures, review, retry of named dead letters, a start with the same sinks', async () => {
    const outbox = await Outbox.open(db);
    const statements: Captured[] = [];
    statements.push(
      ...(await capture(() =>
        outbox.recordMany(
          Array.from({ length: 300 }, (_, i) => punch(`E${i % 150}`)),
          100,
        ),
      )),
    );
    statements.push(...(await capture(() => outbox.record(punch('LAST')))));
    const batch = await outbox.nextBatch('api', 100, Date.now());
    expect(batch).toHaveLength(100);
    const [a, b, c, ...rest] = batch;
    statements.push(
      ...(await capture(() =>
        outbox.applyResults('api', [
          { seq: a!.seq, outcome: 'dead', status: 'USER_NOT_AVAILABLE', error: 'no such user' },
          { seq: b!.seq, outcome: 'retry', status: 'ERROR', error: 'system error', nextAttemptAt: 42 },
          { seq: c!.seq, outcome: 'dead', status: 'INVALID_PARAMETERS', error: 'bad time' },
          ...rest.map((r) => ({ seq: r.seq, outcome: 'delivered' as const })),
        ]),
      )),
    );
    statements.push(...(await capture(() => outbox.noteFailure('api', [b!.seq], 'API_TIMEOUT: no answer'))));
    // A check-out before its check-in, found in a batch and kept back for review.
    const outAt = { ...punch('REV'), direction: 'out' as const, localTime: '2026-03-01 07:00:00', inTime: '2026-03-01 08:00:00' };
    const revOut = await outbox.record(outAt);
    const revItem = (await outbox.nextBatch('api', 1000)).find((i) => i.seq === revOut.seq)!;
    let problems: Array<{ seq: number; reason: string }> = [];
    statements.push(...(await capture(async () => (problems = await outbox.orderProblems([revItem])))));
    expect(problems.map((p) => p.seq)).toEqual([revOut.seq]);
    statements.push(...(await capture(() => outbox.flagForReview(problems))));
    expect((await outbox.get(revOut.id))!.deliveries[0]).toMatchObject({
      state: 'dead',
      lastStatus: 'CLOCK_ORDER',
      lastError: problems[0]!.reason,
    });
    // Punches taken before the clock was trusted, corrected once it is: a check-in and the check-out closing it.
    const boot = 'boot-plans';
    const heldIn = await outbox.record({ ...punch('HELD'), clockSynced: false, bootId: boot, monotonicMs: 1_000 });
    const heldOut = await outbox.record({
      ...punch('HELD'),
      direction: 'out',
      localTime: '2026-03-01 08:00:30',
      inTime: '2026-03-01 08:00:00',
      inId: heldIn.id,
      clockSynced: true,
      bootId: boot,
      monotonicMs: 31_000,
    });
    let corrected = 0;
    statements.push(
      ...(await capture(
        async () =>
          (corrected = await db.transaction((tx) =>
            outbox.correctWithin(tx, new Map([[boot, { wallMs: Date.parse('2026-03-01T09:00:00Z'), monoMs: 1_000 }]])),
          )),
      )),
    );
    expect(corrected).toBe(1);
    expect((await outbox.get(heldIn.id))!.localTime).toBe('2026-03-01 10:00:00');
    expect((await outbox.get(heldOut.id))!.inTime).toBe('2026-03-01 10:00:00');
    statements.push(...(await capture(() => outbox.retryDead([a!.id]))));
    statements.push(...(await capture(() => outbox.reconcileSinks(['api']))));
    statements.push(...(await capture(() => outbox.reconcileSinks(['api']))));
    // The second start with the same sinks reads only the remembered sink set.
    const again = await capture(() => outbox.reconcileSinks(['api']));
    expect(again.filter((s) => /outbox_(events|deliveries)/.test(s.sql))).toEqual([]);

    // And the outcomes are the ones given, item by item.
    const get = (id: string) => outbox.get(id).then((e) => e!.deliveries[0]!);
    expect(await get(a!.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await get(b!.id)).toMatchObject({
      state: 'pending',
      attempts: 2,
      nextAttemptAt: 42,
      lastStatus: 'ERROR',
      lastError: 'API_TIMEOUT: no answer',
    });
    expect(await get(c!.id)).toMatchObject({ state: 'dead', attempts: 1, lastStatus: 'INVALID_PARAMETERS', lastError: 'bad time' });
    expect(await get(rest[0]!.id)).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 'SUCCESS' });
    expect(await outbox.status()).toMatchObject({
      pending: 301 - 97 - 1 + 2,
      dead: 2,
      delivered: 97,
      perSink: { api: { pending: 301 - 97 - 1 + 2, dead: 2 } },
      held: { review: 1 },
    });
    // The first start after the sinks changed looks at every punch (once): not a batch statement.
    await expectNoBacklogReads(
      statements.filter((s) => !s.sql.includes('INSERT OR IGNORE INTO outbox_deliveries') && !s.sql.includes('SELECT DISTINCT seq')),
    );
  });

  it('the next batch walks the pending deliveries only, never the delivered and dead ones before them', async () => {
    // Planned without statistics, SQLite walked the primary key (sink, seq) from the start and
    // filtered state: every batch stepped over all settled deliveries, and a million-punch drain
    // slowed from 13,000 to 2,400 punches a second as it went (62 ms a batch at 985,000 settled).
    const outbox = await Outbox.open(db);
    await outbox.recordMany(Array.from({ length: 40 }, (_, i) => punch(`E${i % 20}`)));
    const statements = await capture(() => outbox.nextBatch('api', 10, Date.now(), new Set(['E1'])));
    const scans = statements.filter((c) => /d\.seq > \?/.test(c.sql));
    expect(scans.length).toBeGreaterThan(0);
    const walksPending = (plan: string[]) => plan.some((d) => tableOf(d) === 'deliveries' && /\(sink=\? AND state=\? AND seq>\?\)/.test(d));
    for (const c of scans) expect(walksPending(await planOf(c)), c.sql).toBe(true);
    // The check catches the statement as it was.
    const old = { ...scans[0]!, sql: scans[0]!.sql.replace(/ INDEXED BY \w+/, '') };
    expect(old.sql).not.toBe(scans[0]!.sql);
    expect(walksPending(await planOf(old))).toBe(false);
  });

  it("two sinks: each sink's outcomes and the punch state from both", async () => {
    const outbox = await Outbox.open(db, { sinks: ['api', 'mqtt'] });
    await outbox.recordMany(Array.from({ length: 50 }, (_, i) => punch(`E${i}`)));
    const api = await outbox.nextBatch('api', 50);
    const mqtt = await outbox.nextBatch('mqtt', 50);
    const statements = [
      ...(await capture(() =>
        outbox.applyResults(
          'api',
          api.map((r, i) =>
            i === 0
              ? { seq: r.seq, outcome: 'dead' as const, status: 'USER_NOT_AVAILABLE', error: 'gone' }
              : { seq: r.seq, outcome: 'delivered' as const },
          ),
        ),
      )),
      ...(await capture(() =>
        outbox.applyResults(
          'mqtt',
          mqtt.map((r, i) =>
            i === 1
              ? { seq: r.seq, outcome: 'retry' as const, error: 'no PUBACK', nextAttemptAt: 7 }
              : { seq: r.seq, outcome: 'delivered' as const },
          ),
        ),
      )),
    ];
    expect(await outbox.status()).toMatchObject({
      pending: 1,
      dead: 1,
      delivered: 48,
      perSink: { api: { pending: 0, dead: 1 }, mqtt: { pending: 1, dead: 0 } },
    });
    await expectNoBacklogReads(statements);
  });

  it('queue status reads counters and small indexes: never the deliveries, never a count of the pending punches', async () => {
    const outbox = await Outbox.open(db);
    await outbox.recordMany(Array.from({ length: 20 }, (_, i) => punch(`E${i}`)));
    const statements = await capture(() => outbox.status());
    const plans = await Promise.all(statements.map(async (c) => ({ sql: c.sql, plan: await planOf(c) })));
    for (const { sql, plan } of plans) {
      // A scan of the partial index of unsynced punches reads those only (none on a synchronized terminal).
      // Likewise the partial index of the check-outs kept back for review (dead letters CLOCK_ORDER).
      const backlog = plan.filter(
        (d) =>
          (tableOf(d) === 'deliveries' && !d.includes('outbox_deliveries_review')) ||
          (tableOf(d) === 'events' && d.startsWith('SCAN') && !d.includes('outbox_events_unsynced')),
      );
      expect(backlog, sql).toEqual([]);
      if (/COUNT\(\*\)/.test(sql)) expect(plan.join(' '), sql).toMatch(/outbox_events_unsynced/);
    }
    expect(statements.some((c) => c.sql.includes('outbox_sink_counts'))).toBe(true);
  });
});
