/**
 * What `fleet --watch` prints after the first view: a line per terminal change, coalesced per
 * terminal, and never more than stdout takes: with a reader that stops reading, the memory held is
 * one pending entry per terminal whatever the number of messages.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  changedFields,
  checkFleet,
  FleetMonitor,
  FleetWatch,
  formatChangeLine,
  formatFleetTable,
  scannerSummary,
  type FleetChange,
  type TerminalView,
} from '../../../src/ops/fleet.js';

/** A stdout whose reader takes each line when it is written. */
class FastStdout extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

/** A stdout whose reader takes a line only when told (`read`); the lines it took are in `lines`. */
class SlowStdout extends Writable {
  readonly lines: string[] = [];
  #pending: (() => void) | null = null;
  constructor(highWaterMark: number) {
    super({ highWaterMark });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    this.#pending = done;
  }
  /** The reader takes what waits, then the event loop turns (drain is emitted on the next tick). */
  async read(): Promise<void> {
    const done = this.#pending;
    this.#pending = null;
    done?.();
    await new Promise((r) => setImmediate(r));
  }
}

const metrics = (pending: number, dead = 0, at = '2026-03-02T08:00:00Z') =>
  Buffer.from(JSON.stringify({ at, queue: { pending, dead, delivered: 5, oldestPendingAgeSec: pending ? 30 : null } }));

describe('FleetWatch', () => {
  it('prints a line per terminal change, only the fields that changed; heartbeats (lastSeen, oldest age, delivered) alone print nothing', () => {
    const monitor = new FleetMonitor({ prefix: 'att' });
    monitor.apply('att/s1/t1/state', Buffer.from('online'));
    monitor.apply('att/s1/t1/metrics', metrics(0));
    monitor.apply('att/s1/t2/state', Buffer.from('online'));
    const out = new FastStdout();
    const watch = new FleetWatch(monitor, out, { json: true });
    monitor.apply('att/s1/t1/metrics', metrics(0, 0, '2026-03-02T08:00:30Z')); // a heartbeat
    monitor.apply('att/s1/t1/state', Buffer.from('offline'));
    monitor.apply('att/s1/t2/metrics', metrics(7, 1));
    monitor.apply('att/s2/t9/state', Buffer.from('online')); // a terminal that was not in the first view
    const lines = out.lines.map((l) => JSON.parse(l) as FleetChange);
    expect(lines.map((l) => [`${l.terminal.site}/${l.terminal.terminal}`, l.changed])).toEqual([
      ['s1/t1', ['status']],
      ['s1/t2', ['queueDepth', 'dead']],
      ['s2/t9', ['status']],
    ]);
    expect(lines[0]!.terminal).toMatchObject({ state: 'offline', queueDepth: 0, lastSeen: '2026-03-02T08:00:30Z' });
    watch.stop();
    monitor.apply('att/s1/t1/state', Buffer.from('online'));
    expect(out.lines).toHaveLength(3);
  });

  it('with a reader that stopped: holds one entry per terminal and a line beyond the buffer, then prints each terminal once, as it is now', async () => {
    const monitor = new FleetMonitor({ prefix: 'att' });
    for (let t = 0; t < 50; t++) monitor.apply(`att/s1/t${t}/state`, Buffer.from('online'));
    const out = new SlowStdout(256);
    const watch = new FleetWatch(monitor, out, { json: false });
    for (let i = 0; i < 100_000; i++) {
      monitor.apply(`att/s1/t${i % 50}/metrics`, metrics(i));
      expect(watch.pending).toBeLessThanOrEqual(50);
    }
    // Nothing read: what waits in stdout is its buffer and at most one line more.
    expect(out.writableLength).toBeLessThan(256 + 200);
    const printedBefore = watch.lines;
    expect(printedBefore).toBeLessThan(10);
    for (let k = 0; k < 1000 && (watch.pending > 0 || out.writableLength > 0); k++) await out.read();
    expect(watch.pending).toBe(0);
    // Every terminal's last queue is the one printed last for it, and each got at most a few lines.
    const last = new Map<string, string>();
    for (const l of out.lines) last.set(l.split('  ')[1]!, l);
    expect(last.size).toBe(50);
    expect(last.get('s1/t49')).toMatch(/s1\/t49 {2}queue -→99999 {2}dead -→0$/);
    expect(watch.lines).toBeLessThan(50 + printedBefore + 1);
    watch.stop();
  });

  it('says before→now in text lines, and names a new terminal', () => {
    const base: TerminalView = {
      site: 's1',
      terminal: 'gate-1',
      state: 'online',
      lastSeen: null,
      queueDepth: 3,
      oldestPendingAgeSec: 10,
      dead: 0,
      delivered: 1,
      lastError: null,
      lastErrorAt: null,
      reasons: [],
      since: null,
      health: 'ok',
      degraded: [],
      scanners: null,
      status: 'online',
      version: '1.0',
      clock: 'synchronized',
      alerts: [],
    };
    const now: TerminalView = { ...base, state: 'offline', status: 'offline', lastError: 'API_TIMEOUT: no answer' };
    expect(changedFields(base, now)).toEqual(['status', 'lastError']);
    // A terminal that runs but lost a scanner: its state stays online, what a person reads changes.
    expect(
      changedFields(base, { ...base, health: 'degraded', status: 'degraded', degraded: ['scanner r30x:/dev/fp0 disconnected'] }),
    ).toEqual(['status']);
    expect(formatChangeLine(base, now, ['status', 'lastError'], new Date('2026-03-02T08:00:00Z'))).toBe(
      '2026-03-02T08:00:00.000Z  s1/gate-1  state online→offline  error -→"API_TIMEOUT: no answer"',
    );
    expect(formatChangeLine(undefined, base, changedFields(undefined, base), new Date('2026-03-02T08:00:00Z'))).toBe(
      '2026-03-02T08:00:00.000Z  s1/gate-1  new: state online  queue 3  dead 0  version 1.0  clock synchronized',
    );
  });
});

const metricsDoc = (doc: Record<string, unknown>) => Buffer.from(JSON.stringify({ at: '2026-03-01T08:00:00.000Z', ...doc }));

describe('fleet view', () => {
  it('shows a terminal that runs with a scanner gone as degraded, with the scanner and the error that still holds', () => {
    const m = new FleetMonitor({ prefix: 'att' });
    m.apply('att/s1/gate-1/state', Buffer.from('online'));
    m.apply(
      'att/s1/gate-1/metrics',
      metricsDoc({
        health: 'degraded',
        degraded: ['scanner r30x:/dev/fp0 disconnected'],
        scanners: [
          { key: 'r30x:/dev/fp0', status: 'disconnected', family: 'r30x' },
          { key: 'sim:iris-hid', status: 'ready', family: 'iris-hid' },
        ],
        lastError: 'AGENT_SCANNER_DISCONNECTED: r30x:/dev/fp0: unplugged',
        lastErrorAt: '2026-03-01T07:59:00.000Z',
      }),
    );
    const [v] = m.terminals;
    expect(v).toMatchObject({ state: 'online', status: 'degraded', health: 'degraded', lastErrorAt: '2026-03-01T07:59:00.000Z' });
    const table = formatFleetTable(m.terminals, Date.parse('2026-03-01T08:00:30.000Z'));
    expect(table).toMatch(/^SITE +TERMINAL +STATE +LAST SEEN +SCANNERS/);
    expect(table).toMatch(/gate-1 +degraded +30s ago +r30x:\/dev\/fp0 disconnected /);
    expect(table).toContain('AGENT_SCANNER_DISCONNECTED: r30x:/dev/fp0: unplugged (since 90s ago)');

    // Back: healthy, and the error is gone with its time.
    m.apply(
      'att/s1/gate-1/metrics',
      metricsDoc({
        health: 'ok',
        degraded: [],
        scanners: [
          { key: 'r30x:/dev/fp0', status: 'ready' },
          { key: 'sim:iris-hid', status: 'ready' },
        ],
        lastError: null,
        lastErrorAt: null,
      }),
    );
    expect(m.terminals[0]).toMatchObject({ status: 'online', lastError: null, lastErrorAt: null, degraded: [] });
    expect(scannerSummary(m.terminals[0]!.scanners)).toBe('2/2 ready');
  });

  it('--check fails for a lost or degraded terminal and for an empty fleet, not for a clean stop', () => {
    const m = new FleetMonitor({ prefix: 'att' });
    expect(checkFleet(m.terminals)).toMatchObject({ ok: false, summary: expect.stringMatching(/^CRITICAL: no terminal has reported/) });
    m.apply('att/s1/a/state', Buffer.from('online'));
    m.apply('att/s1/b/state', Buffer.from('offline'));
    expect(checkFleet(m.terminals)).toEqual({ ok: true, problems: [], summary: 'OK: 2 terminal(s), none lost or degraded' });
    m.apply('att/s1/c/state', Buffer.from('lost'));
    m.apply('att/s1/a/metrics', metricsDoc({ health: 'degraded', degraded: ['upload:api: API_TIMEOUT'] }));
    const c = checkFleet(m.terminals);
    expect(c.ok).toBe(false);
    expect(c.problems.map((p) => `${p.terminal} ${p.status}`)).toEqual(['a degraded', 'c lost']);
    expect(c.summary).toMatch(/^CRITICAL: 2 of 3 terminal\(s\) lost or degraded: s1\/a degraded: upload:api: API_TIMEOUT; s1\/c lost/);
  });

  it('reads metrics of an older agent (no health, no scanners) without inventing them', () => {
    const m = new FleetMonitor({ prefix: 'att' });
    m.apply('att/s1/old/state', Buffer.from('online'));
    m.apply('att/s1/old/metrics', metricsDoc({ queue: { pending: 1 }, lastError: 'X: y' }));
    expect(m.terminals[0]).toMatchObject({ status: 'online', health: null, scanners: null, lastError: 'X: y' });
    expect(scannerSummary(null)).toBe('-');
  });
});
