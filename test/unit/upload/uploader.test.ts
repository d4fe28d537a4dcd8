import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/core/errors.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox, type PunchInput } from '../../../src/store/outbox.js';
import { Uploader } from '../../../src/upload/uploader.js';
import { MemorySink } from './memory-sink.fixture.js';

let dir: string;
let db: SqliteDatabase;
let minute = 0;

function punch(code: string, direction: 'in' | 'out' = 'in'): PunchInput {
  const m = minute++;
  const t = `2026-03-02 ${String(6 + Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`;
  return { employeeCode: code, direction, localTime: t, tzOffset: 0, source: 'finger', terminalId: 'gate-1' };
}

async function until(cond: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uploader-'));
  db = await openAgentDatabase(dir);
  minute = 0;
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Uploader', () => {
  it('claims nothing while the time authority settles, and keeps a check-out before its check-in back for review', async () => {
    const outbox = await Outbox.open(db);
    const a = await outbox.record({ ...punch('A'), localTime: '2026-03-02 10:00:00' });
    await outbox.record({ ...punch('A', 'out'), localTime: '2026-03-02 09:00:00', inTime: '2026-03-02 10:00:00', inId: a.id });
    await outbox.record(punch('B'));
    const sink = new MemorySink();
    let open = false;
    const up = new Uploader({ outbox, sinks: [sink], idlePollMs: 10, gate: { open: () => open } });
    const review: string[][] = [];
    up.on('review', (r) => review.push(r.ids));
    await up.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.batches).toEqual([]);
    open = true;
    await until(async () => (await outbox.status()).delivered === 2);
    await up.stop();
    expect(sink.accepted.map((i) => [i.employeeCode, i.direction])).toEqual([
      ['A', 'in'],
      ['B', 'in'],
    ]);
    expect(review).toHaveLength(1);
    expect((await outbox.list({ dead: true }))[0]).toMatchObject({
      employeeCode: 'A',
      direction: 'out',
      deliveries: [{ lastStatus: 'CLOCK_ORDER' }],
    });
  });

  it('drains the backlog in batches of batchSize', async () => {
    const outbox = await Outbox.open(db);
    await outbox.recordMany(Array.from({ length: 450 }, (_, i) => punch(`E${i}`)));
    const sink = new MemorySink();
    const up = new Uploader({ outbox, sinks: [sink], batchSize: 200, idlePollMs: 20 });
    let delivered = 0;
    up.on('delivered', (e) => (delivered += e.count));
    await up.start();
    await until(async () => (await outbox.status()).pending === 0);
    await up.stop();
    expect(sink.batches.slice(0, 3)).toEqual([200, 200, 50]);
    expect(delivered).toBe(450);
    expect(new Set(sink.accepted.map((a) => a.id)).size).toBe(450);
    expect((await outbox.status()).delivered).toBe(450);
  });

  it('one poison item becomes a dead letter with its reason; the others are delivered', async () => {
    const outbox = await Outbox.open(db);
    for (const c of ['A', 'GHOST', 'B', 'C']) await outbox.record(punch(c));
    const sink = new MemorySink();
    sink.unknown.add('GHOST');
    const up = new Uploader({ outbox, sinks: [sink] });
    const dead: string[] = [];
    up.on('dead', (d) => dead.push(`${d.employeeCode}:${d.status}`));
    expect(await up.runOnce(sink)).toBe(4);
    expect(dead).toEqual(['GHOST:USER_NOT_AVAILABLE']);
    expect(sink.accepted.map((a) => a.employeeCode)).toEqual(['A', 'B', 'C']);
    const [letter] = await outbox.list({ dead: true });
    expect(letter!.deliveries[0]).toMatchObject({ lastStatus: 'USER_NOT_AVAILABLE', lastError: 'user GHOST not found' });
    // The cause is fixed: retry delivers it.
    sink.unknown.clear();
    await outbox.retryDead();
    expect(await up.runOnce(sink)).toBe(1);
    expect(await outbox.status()).toMatchObject({ pending: 0, dead: 0, delivered: 4 });
  });

  it('an ERROR item is retried after its own backoff; its later items wait, the others go', async () => {
    let now = 1_000_000;
    const outbox = await Outbox.open(db, { now: () => now });
    await outbox.record(punch('A', 'in'));
    await outbox.record(punch('B', 'in'));
    await outbox.record(punch('A', 'out'));
    const sink = new MemorySink();
    sink.errorsFor.set('A', 1);
    const up = new Uploader({ outbox, sinks: [sink], backoffBaseMs: 1000, backoffCapMs: 5000, random: () => 0.5, now: () => now });
    await up.runOnce(sink);
    // A-in: ERROR → retry; A-out never travelled with it; B went.
    expect(sink.batches).toEqual([2]);
    expect(sink.accepted.map((a) => `${a.employeeCode}-${a.direction}`)).toEqual(['B-in']);
    expect(await up.runOnce(sink)).toBe(0); // A is backing off
    now += 600;
    expect(await up.runOnce(sink)).toBe(1);
    expect(await up.runOnce(sink)).toBe(1);
    expect(sink.accepted.map((a) => `${a.employeeCode}-${a.direction}`)).toEqual(['B-in', 'A-in', 'A-out']);
  });

  it('a whole-request failure backs off (honouring retryAfterMs) and loses nothing', async () => {
    const outbox = await Outbox.open(db);
    await outbox.record(punch('A'));
    const sink = new MemorySink();
    sink.failWith = new AgentError('API_RATE_LIMITED', 'slow down', { retryAfterMs: 300 }, { retryable: true });
    const up = new Uploader({ outbox, sinks: [sink], backoffBaseMs: 1, backoffCapMs: 10_000, idlePollMs: 10 });
    const errors: number[] = [];
    up.on('error', (e) => errors.push(e.retryInMs));
    await up.start();
    await until(() => errors.length >= 1);
    expect(errors[0]).toBeGreaterThanOrEqual(300);
    sink.failWith = null;
    await until(async () => (await outbox.status()).delivered === 1);
    await up.stop();
    expect(errors.length).toBe(1);
    const [ev] = await outbox.list({ delivered: true });
    expect(ev!.deliveries[0]!.attempts).toBe(2);
  });

  it('stop() releases a hung in-flight batch: it stays pending', async () => {
    const outbox = await Outbox.open(db);
    await outbox.record(punch('A'));
    const sink = new MemorySink();
    sink.hold = new Promise(() => undefined);
    const up = new Uploader({ outbox, sinks: [sink], stopGraceMs: 50 });
    await up.start();
    await until(() => sink.batches.length === 1);
    await up.stop();
    expect(await outbox.status()).toMatchObject({ pending: 1, delivered: 0 });
  });

  it('with two sinks, one down does not hold the other; done only when both have it', async () => {
    const outbox = await Outbox.open(db, { sinks: ['api', 'mqtt'] });
    await outbox.record(punch('A'));
    const api = new MemorySink('api');
    const mqtt = new MemorySink('mqtt');
    mqtt.failWith = new AgentError('MQTT_UNAVAILABLE', 'down', {}, { retryable: true });
    const up = new Uploader({ outbox, sinks: [api, mqtt], backoffBaseMs: 20, backoffCapMs: 50, idlePollMs: 10 });
    await up.start();
    await until(() => api.accepted.length === 1);
    expect((await outbox.status()).pending).toBe(1);
    mqtt.failWith = null;
    await until(async () => (await outbox.status()).delivered === 1);
    await up.stop();
    expect(mqtt.accepted).toHaveLength(1);
  });

  it('property: whatever fails, each employee’s punches are accepted in recording order, each once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('A', 'B', 'C', 'D'), fc.boolean()), { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(fc.constantFrom('A', 'B', 'C', 'D'), fc.integer({ min: 0, max: 3 })), { maxLength: 4 }),
        async (punches, errors) => {
          let now = 0;
          const outbox = await Outbox.open(db, { now: () => now });
          await db.transaction((d) => d.run('DELETE FROM outbox_events'));
          for (const [code, isIn] of punches) await outbox.record(punch(code, isIn ? 'in' : 'out'));
          const sink = new MemorySink();
          for (const [code, n] of errors) sink.errorsFor.set(code, n);
          const up = new Uploader({ outbox, sinks: [sink], batchSize: 7, backoffBaseMs: 10, backoffCapMs: 10, now: () => now });
          for (let i = 0; i < 200 && (await outbox.status()).pending > 0; i++) {
            await up.runOnce(sink);
            now += 20;
          }
          expect((await outbox.status()).pending).toBe(0);
          const ids = sink.accepted.map((a) => a.seq);
          expect(ids).toHaveLength(punches.length);
          expect(new Set(ids).size).toBe(punches.length);
          // No batch ever carried two punches of one employee.
          expect(sink.batches.every((n) => n <= 4)).toBe(true);
          for (const code of ['A', 'B', 'C', 'D']) {
            const seqs = sink.accepted.filter((a) => a.employeeCode === code).map((a) => a.seq);
            expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('pipelined drain: two batches in flight, never the same employee in both, order kept', async () => {
    const outbox = await Outbox.open(db);
    const codes = Array.from({ length: 30 }, (_, i) => `P${i}`);
    const punches: PunchInput[] = [];
    for (let round = 0; round < 8; round++) for (const c of codes) punches.push(punch(c, round % 2 ? 'out' : 'in'));
    // A few employees with long runs of their own.
    for (let i = 0; i < 20; i++) punches.push(punch('LONG', i % 2 ? 'out' : 'in'));
    await outbox.recordMany(punches);
    const sink = new MemorySink();
    sink.delayMs = 5;
    sink.errorsFor.set('P3', 2);
    const up = new Uploader({ outbox, sinks: [sink], batchSize: 16, backoffBaseMs: 5, backoffCapMs: 10, idlePollMs: 10 });
    await up.start();
    await until(async () => (await outbox.status()).pending === 0);
    await up.stop();
    expect(sink.maxInFlight).toBe(2);
    expect(sink.overlaps).toEqual([]);
    expect(sink.accepted).toHaveLength(punches.length);
    for (const code of [...codes, 'LONG']) {
      const seqs = sink.accepted.filter((a) => a.employeeCode === code).map((a) => a.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
  });

  it('an item that makes the whole request fail (HTTP 500) is isolated by halving; the others go on', async () => {
    let now = 1_000_000;
    const outbox = await Outbox.open(db, { now: () => now });
    const codes = Array.from({ length: 40 }, (_, i) => `H${i}`);
    for (const c of codes) await outbox.record(punch(c));
    await outbox.record(punch('H7', 'out'));
    const sink = new MemorySink();
    const real = sink.deliver.bind(sink);
    sink.deliver = async (items, options) => {
      if (items.some((i) => i.employeeCode === 'H7' && i.direction === 'in')) {
        sink.batches.push(items.length);
        throw new AgentError('API_HTTP_5XX', 'the service failed (HTTP 500)', { status: 500 }, { retryable: true });
      }
      return real(items, options);
    };
    const up = new Uploader({
      outbox,
      sinks: [sink],
      batchSize: 40,
      backoffBaseMs: 1000,
      backoffCapMs: 60_000,
      random: () => 0.5,
      now: () => now,
    });
    for (let i = 0; i < 100 && sink.accepted.length < 39; i++) {
      await up.runOnce(sink).catch(() => undefined);
      now += 20;
    }
    // Everyone but H7 is delivered; H7's check-in backs off on its own, its check-out waits for it.
    expect(new Set(sink.accepted.map((a) => a.employeeCode))).toEqual(new Set(codes.filter((c) => c !== 'H7')));
    const st = await outbox.status();
    expect(st).toMatchObject({ pending: 2, delivered: 39 });
    const [h7] = await outbox.list();
    expect(h7!.deliveries[0]!.lastError).toMatch(/API_HTTP_5XX/);
    expect(Math.min(...sink.batches)).toBe(1);
  });
});
