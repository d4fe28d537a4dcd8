import { describe, expect, it } from 'vitest';
import { ConsoleFleet, stateSince } from '../../../src/console/console-fleet.js';

const NOW = Date.parse('2026-03-02T08:00:00.000Z');
const b = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

function fleet() {
  const f = new ConsoleFleet({ prefix: 'attendance', historyHours: 24, maxPayloadBytes: 4096, maxTerminals: 3 });
  const dropped: string[] = [];
  const removed: string[] = [];
  f.on('dropped', (r) => dropped.push(r));
  f.on('remove', (k) => removed.push(k));
  return { f, dropped, removed };
}

describe("the console's fleet", () => {
  it("shows the state the terminal's metrics make, with its reasons, since the change: a republish of metrics or info does not reset it", () => {
    const { f } = fleet();
    const iso = (ms: number) => new Date(ms).toISOString();
    const metrics = (state: string, since: number, at: number) =>
      b({
        at: iso(at),
        health: state === 'degraded' ? 'degraded' : 'ok',
        state,
        stateSince: iso(since),
        reasons: state === 'degraded' ? [{ code: 'SCANNER_NOT_READY', message: 'scanner fp disconnected' }] : [],
        degraded: state === 'degraded' ? ['scanner fp disconnected'] : [],
        clock: { clockTrusted: true, clockSource: 'assumed' },
      });
    f.apply('attendance/plant-a/gate-7/state', b('online'), true, NOW);
    f.apply('attendance/plant-a/gate-7/metrics', metrics('online', NOW - 60_000, NOW), true, NOW);
    expect(f.get('plant-a/gate-7')!.row).toMatchObject({ state: 'online', reasons: [], clock: 'assumed', clockSynchronized: true });
    // The scanner goes: the metrics come first (an older agent's state topic would stay online).
    f.apply('attendance/plant-a/gate-7/metrics', metrics('degraded', NOW + 1000, NOW + 1000), false, NOW + 1100);
    let r = f.get('plant-a/gate-7')!;
    expect(r.row).toMatchObject({ state: 'degraded', reasons: [{ code: 'SCANNER_NOT_READY', message: 'scanner fp disconnected' }] });
    expect(stateSince(r)).toEqual({ at: NOW + 1000, exact: true });
    expect(r.transitions.map((t) => t.state)).toEqual(['online', 'degraded']);
    // Its word, metrics every second and info at every retry of the scanner: "for" stays.
    f.apply('attendance/plant-a/gate-7/state', b('degraded'), false, NOW + 1200);
    for (let k = 2; k < 40; k++) {
      f.apply('attendance/plant-a/gate-7/metrics', metrics('degraded', NOW + 1000, NOW + k * 1000), false, NOW + k * 1000);
      if (k % 20 === 0) f.apply('attendance/plant-a/gate-7/info', b({ at: iso(NOW + k * 1000), version: '1' }), false, NOW + k * 1000);
    }
    r = f.get('plant-a/gate-7')!;
    expect(stateSince(r)).toEqual({ at: NOW + 1000, exact: true });
    expect(r.transitions.map((t) => t.state)).toEqual(['online', 'degraded']);
  });

  it('builds a terminal from its retained state, info and metrics, and knows since when it is in its state', () => {
    const { f } = fleet();
    f.apply('attendance/plant-a/gate-7/state', b('online'), true, NOW);
    f.apply('attendance/plant-a/gate-7/info', b({ at: new Date(NOW - 3_600_000).toISOString(), version: '1.0.0' }), true, NOW);
    f.apply(
      'attendance/plant-a/gate-7/metrics',
      b({
        at: new Date(NOW - 10_000).toISOString(),
        queue: { pending: 4, dead: 0 },
        lastError: 'E1',
        lastErrorAt: new Date(NOW - 20_000).toISOString(),
      }),
      true,
      NOW,
    );
    const r = f.get('plant-a/gate-7')!;
    expect(r.row).toMatchObject({ state: 'online', version: '1.0.0', queuePending: 4 });
    // retained: online since it connected (its info), not exact
    expect(stateSince(r)).toEqual({ at: NOW - 3_600_000, exact: false });
    expect(r.errors).toEqual([{ at: new Date(NOW - 20_000).toISOString(), message: 'E1' }]);
    // a live change is exact
    f.apply('attendance/plant-a/gate-7/state', b('lost'), false, NOW + 5000);
    expect(stateSince(f.get('plant-a/gate-7')!)).toEqual({ at: NOW + 5000, exact: true });
    expect(f.get('plant-a/gate-7')!.transitions.map((t) => t.state)).toEqual(['online', 'lost']);
    // a lost state kept by the broker dates from when the terminal was last seen
    f.apply('attendance/plant-a/gate-8/state', b('lost'), true, NOW);
    f.apply('attendance/plant-a/gate-8/metrics', b({ at: new Date(NOW - 600_000).toISOString() }), true, NOW);
    expect(stateSince(f.get('plant-a/gate-8')!)).toEqual({ at: NOW - 600_000, exact: false });
  });

  it('refuses what a terminal could not have published, and never throws', () => {
    const { f, dropped } = fleet();
    expect(f.apply('attendance/plant a/gate-7/state', b('online'), false, NOW)).toBeNull();
    expect(f.apply('attendance/plant-a/gate-7/metrics', b('{not json'), false, NOW)).toBeNull();
    expect(f.apply('attendance/plant-a/gate-7/metrics', b('[1,2]'), false, NOW)).toBeNull();
    expect(f.apply('attendance/plant-a/gate-7/metrics', Buffer.alloc(5000, 0x20), false, NOW)).toBeNull();
    expect(f.apply('attendance/plant-a/gate-7/state', b('<script>'), false, NOW)).toBeNull();
    expect(dropped).toHaveLength(5);
    // not a terminal's topic at all: ignored without a word
    expect(f.apply('attendance/plant-a/templates/E1', b('x'), false, NOW)).toBeNull();
    expect(f.apply('attendance/plant-a/alerts', b('{}'), false, NOW)).toBeNull();
    expect(f.apply('other/plant-a/gate-7/state', b('online'), false, NOW)).toBeNull();
    expect(f.size).toBe(0);
  });

  it('keeps at most maxTerminals, and forgets a terminal whose retained messages were all cleared', () => {
    const { f, dropped, removed } = fleet();
    for (const t of ['a', 'b', 'c', 'd']) f.apply(`attendance/s/${t}/state`, b('online'), false, NOW);
    expect(f.size).toBe(3);
    expect(dropped).toEqual(['more than 3 terminals']);
    f.apply('attendance/s/a/state', b(''), false, NOW);
    expect(removed).toEqual(['s/a']);
    expect(f.records().map((r) => r.terminal)).toEqual(['b', 'c']);
  });
});
