import { describe, expect, it } from 'vitest';
import { checkFleet, FleetMonitor, formatFleetTable, scannerSummary } from '../../../src/ops/fleet.js';

const metrics = (doc: Record<string, unknown>) => Buffer.from(JSON.stringify({ at: '2026-03-01T08:00:00.000Z', ...doc }));

describe('fleet view', () => {
  it('shows a terminal that runs with a scanner gone as degraded, with the scanner and the error that still holds', () => {
    const m = new FleetMonitor({ prefix: 'att' });
    m.apply('att/s1/gate-1/state', Buffer.from('online'));
    m.apply('att/s1/gate-1/metrics', metrics({
      health: 'degraded', degraded: ['scanner r30x:/dev/fp0 disconnected'],
      scanners: [{ key: 'r30x:/dev/fp0', status: 'disconnected', family: 'r30x' }, { key: 'sim:iris-hid', status: 'ready', family: 'iris-hid' }],
      lastError: 'AGENT_SCANNER_DISCONNECTED: r30x:/dev/fp0: unplugged', lastErrorAt: '2026-03-01T07:59:00.000Z',
    }));
    const [v] = m.terminals;
    expect(v).toMatchObject({ state: 'online', status: 'degraded', health: 'degraded', lastErrorAt: '2026-03-01T07:59:00.000Z' });
    const table = formatFleetTable(m.terminals, Date.parse('2026-03-01T08:00:30.000Z'));
    expect(table).toMatch(/^SITE +TERMINAL +STATE +LAST SEEN +SCANNERS/);
    expect(table).toMatch(/gate-1 +degraded +30s ago +r30x:\/dev\/fp0 disconnected /);
    expect(table).toContain('AGENT_SCANNER_DISCONNECTED: r30x:/dev/fp0: unplugged (since 90s ago)');

    // Back: healthy, and the error is gone with its time.
    m.apply('att/s1/gate-1/metrics', metrics({ health: 'ok', degraded: [], scanners: [{ key: 'r30x:/dev/fp0', status: 'ready' }, { key: 'sim:iris-hid', status: 'ready' }], lastError: null, lastErrorAt: null }));
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
    m.apply('att/s1/a/metrics', metrics({ health: 'degraded', degraded: ['upload:api: API_TIMEOUT'] }));
    const c = checkFleet(m.terminals);
    expect(c.ok).toBe(false);
    expect(c.problems.map((p) => `${p.terminal} ${p.status}`)).toEqual(['a degraded', 'c lost']);
    expect(c.summary).toMatch(/^CRITICAL: 2 of 3 terminal\(s\) lost or degraded: s1\/a degraded: upload:api: API_TIMEOUT; s1\/c lost/);
  });

  it('reads metrics of an older agent (no health, no scanners) without inventing them', () => {
    const m = new FleetMonitor({ prefix: 'att' });
    m.apply('att/s1/old/state', Buffer.from('online'));
    m.apply('att/s1/old/metrics', metrics({ queue: { pending: 1 }, lastError: 'X: y' }));
    expect(m.terminals[0]).toMatchObject({ status: 'online', health: null, scanners: null, lastError: 'X: y' });
    expect(scannerSummary(null)).toBe('-');
  });
});
