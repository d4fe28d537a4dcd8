/** The fleet as the page shows it: table rows, the snapshot, a terminal's page. */
import { describe, expect, it } from 'vitest';
import { FleetView } from '../../../src/console/fleet-view.js';
import { feedTerminal, testContext } from '../../helpers/console-parts.js';

const NOW = Date.parse('2026-03-02T08:00:00.000Z');

describe('the fleet view', () => {
  it('makes a short row per terminal, times in ms, with its alerts and their worst severity', () => {
    const ctx = testContext();
    feedTerminal(
      ctx,
      'plant-a',
      'gate-1',
      {
        state: 'online',
        info: { at: new Date(NOW - 60_000).toISOString(), version: '1.2.3' },
        metrics: {
          at: new Date(NOW - 1000).toISOString(),
          queue: { pending: 3, dead: 1, oldestPendingAgeSec: 40 },
          system: { cpuTempC: 51, freeDiskMb: 900 },
          scanners: [
            { key: 'a', status: 'ready' },
            { key: 'b', status: 'open-failed' },
          ],
        },
      },
      NOW,
    );
    ctx.book.set(
      'plant-a',
      'gate-1',
      [{ code: 'DEAD_LETTERS', severity: 'warning', site: 'plant-a', terminal: 'gate-1', message: 'm', hint: 'h' }],
      NOW,
    );
    const view = new FleetView(ctx);
    const row = view.row(ctx.fleet.get('plant-a/gate-1')!);
    expect(row).toMatchObject({
      key: 'plant-a/gate-1',
      state: 'online',
      since: NOW,
      sinceExact: true,
      metricsAt: NOW - 1000,
      pending: 3,
      oldestSec: 40,
      dead: 1,
      scanners: 2,
      scannersReady: 1,
      temp: 51,
      disk: 900,
      version: '1.2.3',
      alerts: 1,
      severity: 'warning',
    });
    expect(view.rows(['plant-a/gate-1', 'plant-a/gone']).map((r) => r.key)).toEqual(['plant-a/gate-1']);
  });

  it("gives the snapshot a page starts from and a terminal's page, 404 for a terminal that never reported", () => {
    const ctx = testContext();
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'lost', metrics: { at: new Date(NOW).toISOString(), lastError: 'E1' } }, NOW);
    const view = new FleetView(ctx);
    const snap = view.snapshot();
    expect(snap.terminals.map((t) => t.key)).toEqual(['plant-a/gate-1']);
    expect(snap.console).toMatchObject({ mqttConnected: false, loginRequired: false, prefix: 'attendance', commands: { enabled: false } });
    const page = view.terminal('plant-a/gate-1');
    expect(page.errors.map((e) => e.message)).toEqual(['E1']);
    expect(page.transitions.map((t) => t.state)).toEqual(['lost']);
    expect(page.history).not.toBeNull();
    expect(() => view.terminal('plant-a/nope')).toThrow(expect.objectContaining({ code: 'CONSOLE_NOT_FOUND', status: 404 }));
  });
});
