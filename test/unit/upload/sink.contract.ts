/**
 * The one contract every sink passes (memory, api, mqtt). A harness gives a sink wired to a real
 * downstream (or an in-memory one for the unit run), a way to make employees known there, to read
 * back what the downstream holds, and to take the downstream away and bring it back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/core/errors.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox, type OutboxItem, type PunchInput } from '../../../src/store/outbox.js';
import type { Sink } from '../../../src/upload/sink.js';

export interface SinkUnderTest {
  sink: Sink;
  /** Makes the employees known downstream (users on the service). */
  known(codes: string[]): Promise<void>;
  /** What the downstream holds, one `employeeCode|in|out` key per event it keeps (after its own dedupe). */
  received(): Promise<string[]>;
  outage(): Promise<void>;
  restore(): Promise<void>;
  /** Makes the downstream take requests but never answer; resolves with a function that ends it. */
  stall(): Promise<() => Promise<void>>;
  teardown(): Promise<void>;
}

const signal = () => new AbortController().signal;

export function sinkContract(name: string, setup: () => Promise<SinkUnderTest>): void {
  describe(`sink contract: ${name}`, () => {
    let t: SinkUnderTest;
    let dir: string;
    let db: SqliteDatabase;
    let outbox: Outbox;
    let n = 0;

    async function items(punches: Array<Partial<PunchInput> & { employeeCode: string }>): Promise<OutboxItem[]> {
      for (const p of punches) {
        await outbox.record({
          direction: 'in',
          localTime: `2026-03-02 08:${String(n++ % 60).padStart(2, '0')}:00`,
          tzOffset: 60,
          source: 'finger',
          terminalId: 'gate-1',
          ...p,
        });
      }
      const batch = await outbox.nextBatch(t.sink.name, 1000);
      await outbox.applyResults(
        t.sink.name,
        batch.map((b) => ({ seq: b.seq, outcome: 'delivered' as const })),
      );
      return batch;
    }

    beforeAll(async () => {
      t = await setup();
      dir = mkdtempSync(join(tmpdir(), 'sink-contract-'));
      db = await openAgentDatabase(dir);
      outbox = await Outbox.open(db, { sinks: [t.sink.name] });
    });
    afterAll(async () => {
      await t?.teardown();
      await db?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('answers nothing for an empty batch', async () => {
      expect(await t.sink.deliver([], { signal: signal() })).toEqual([]);
    });

    it('delivers a batch: one outcome per item in order, the downstream holds each event once', async () => {
      const codes = Array.from({ length: 30 }, (_, i) => `C${name}${i}`);
      await t.known(codes);
      const batch = await items(codes.map((c) => ({ employeeCode: c })));
      const out = await t.sink.deliver(batch, { signal: signal() });
      expect(out).toHaveLength(30);
      expect(out.every((o) => o.outcome === 'delivered')).toBe(true);
      const got = (await t.received()).filter((k) => k.startsWith(`C${name}`));
      expect(got.sort()).toEqual(batch.map((b) => `${b.employeeCode}|${b.localTime}|`).sort());
    });

    it('a check-out after its check-in in the same batch closes that event', async () => {
      const code = `P${name}`;
      await t.known([code]);
      const [inItem] = await items([{ employeeCode: code, localTime: '2026-03-03 07:00:00' }]);
      const [outItem] = await items([
        { employeeCode: code, direction: 'out', localTime: '2026-03-03 15:00:00', inTime: '2026-03-03 07:00:00', inId: inItem!.id },
      ]);
      const out = await t.sink.deliver([inItem!, outItem!], { signal: signal() });
      expect(out.map((o) => o.outcome)).toEqual(['delivered', 'delivered']);
      const got = (await t.received()).filter((k) => k.startsWith(`${code}|`));
      expect(got).toEqual([`${code}|2026-03-03 07:00:00|2026-03-03 15:00:00`]);
    });

    it('a replay of a delivered batch is delivered again and doubles nothing downstream', async () => {
      const codes = [`R${name}1`, `R${name}2`];
      await t.known(codes);
      const batch = await items(codes.map((c) => ({ employeeCode: c })));
      await t.sink.deliver(batch, { signal: signal() });
      const again = await t.sink.deliver(batch, { signal: signal() });
      expect(again.every((o) => o.outcome === 'delivered')).toBe(true);
      const got = (await t.received()).filter((k) => k.startsWith(`R${name}`));
      expect(got).toHaveLength(2);
    });

    it('an aborted delivery (the uploader releasing it on stop) settles promptly and claims nothing delivered', async () => {
      const code = `S${name}`;
      await t.known([code]);
      const batch = await items([{ employeeCode: code }]);
      const release = await t.stall();
      try {
        const ac = new AbortController();
        const started = Date.now();
        setTimeout(() => ac.abort(), 150);
        const settled = await t.sink.deliver(batch, { signal: ac.signal }).then(
          (outcomes) => outcomes,
          (err: unknown) => err,
        );
        expect(Date.now() - started).toBeLessThan(2500);
        if (Array.isArray(settled)) expect(settled.map((o) => o.outcome)).toEqual(['retry']);
        else expect(settled).toBeInstanceOf(AgentError);
      } finally {
        await release();
      }
    });

    it('when the downstream is away it throws a retryable AgentError, and delivers once it is back', async () => {
      const code = `O${name}`;
      await t.known([code]);
      const batch = await items([{ employeeCode: code }]);
      await t.outage();
      const err = await t.sink.deliver(batch, { signal: signal() }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AgentError);
      expect((err as AgentError).retryable).toBe(true);
      await t.restore();
      const deadline = Date.now() + 15_000;
      let outcome: string | null = null;
      while (Date.now() < deadline) {
        try {
          outcome = (await t.sink.deliver(batch, { signal: signal() }))[0]!.outcome;
          break;
        } catch (e) {
          expect((e as AgentError).retryable).toBe(true);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(outcome).toBe('delivered');
      expect((await t.received()).filter((k) => k.startsWith(`${code}|`))).toHaveLength(1);
    });
  });
}
