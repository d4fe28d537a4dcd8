import { describe, expect, it } from 'vitest';
import { AlertBook, judgeTerminal, type AlertRules } from '../../../src/console/alert-rules.js';
import { ConfigSchema } from '../../../src/config/config.js';
import { fleetRow, parseInfo, parseMetrics } from '../../../src/ops/fleet-row.js';

const RULES: AlertRules = ConfigSchema.parse({}).console.alerts;
const NOW = Date.parse('2026-03-02T08:00:00.000Z');
const iso = (msAgo: number) => new Date(NOW - msAgo).toISOString();

function row(state: string, metrics: Record<string, unknown> = {}, info: Record<string, unknown> = { at: iso(60_000), version: '1' }) {
  return fleetRow('plant-a', 'gate-7', state, parseInfo(info), parseMetrics({ at: iso(1000), queue: { pending: 0, dead: 0 }, ...metrics }));
}
const codes = (r: ReturnType<typeof row>, stateSince: number | null = NOW - 10_000, rules: AlertRules = RULES) =>
  judgeTerminal(r, { stateSince }, rules, NOW).map((a) => a.code);

describe('alert rules', () => {
  it('raise nothing for a healthy terminal', () => {
    expect(codes(row('online', { clock: { clockTrusted: true }, system: { freeDiskMb: 5000, cpuTempC: 50 } }))).toEqual([]);
  });

  it('raise TERMINAL_LOST only after lostMinutes in the lost state (at once with 0), as critical', () => {
    expect(codes(row('lost'), NOW - 60_000)).toEqual([]);
    expect(codes(row('lost'), NOW - 3 * 60_000)).toEqual(['TERMINAL_LOST']);
    expect(codes(row('lost'), NOW - 1000, { ...RULES, lostMinutes: 0 })).toEqual(['TERMINAL_LOST']);
    expect(codes(row('lost'), NOW - 3 * 60_000, { ...RULES, lostMinutes: null })).toEqual([]);
    // a clean stop is not an alert
    expect(codes(row('offline'), NOW - 3_600_000)).toEqual([]);
    expect(judgeTerminal(row('lost'), { stateSince: NOW - 3 * 60_000 }, RULES, NOW)[0]).toMatchObject({
      severity: 'critical',
      site: 'plant-a',
      terminal: 'gate-7',
    });
  });

  it('raise TERMINAL_SILENT for a terminal that says online and publishes nothing', () => {
    expect(codes(row('online', { at: iso(6 * 60_000) }, { at: iso(6 * 60_000) }))).toEqual(['TERMINAL_SILENT']);
    expect(codes(row('degraded', { at: iso(60_000) }))).toEqual(['TERMINAL_DEGRADED']);
    expect(codes(row('degraded', { at: iso(60_000) }), NOW - 10_000, { ...RULES, degraded: false })).toEqual([]);
  });

  it('raise TERMINAL_DEGRADED with every reason the terminal gives, and nothing once it says it runs fully', () => {
    const reasons = [
      { code: 'SCANNER_NOT_READY', message: 'scanner r30x:/dev/fp0 disconnected' },
      { code: 'OUTBOX_FULL', message: 'outbox full: new punches are refused' },
    ];
    const raised = judgeTerminal(row('online', { health: 'degraded', state: 'degraded', reasons }), { stateSince: null }, RULES, NOW);
    expect(raised.map((a) => [a.code, a.severity, a.message])).toEqual([
      ['TERMINAL_DEGRADED', 'warning', 'degraded: scanner r30x:/dev/fp0 disconnected; outbox full: new punches are refused'],
    ]);
    expect(codes(row('degraded', { health: 'ok', state: 'online', reasons: [] }))).toEqual([]);
  });

  it('raise QUEUE_OLDEST_PENDING, DEAD_LETTERS, CLOCK_UNSYNCHRONIZED, DISK_LOW, TEMPERATURE_HIGH past their limits', () => {
    expect(codes(row('online', { queue: { pending: 3, dead: 0, oldestPendingAgeSec: 29 * 60 } }))).toEqual([]);
    expect(codes(row('online', { queue: { pending: 3, dead: 0, oldestPendingAgeSec: 31 * 60 } }))).toEqual(['QUEUE_OLDEST_PENDING']);
    expect(codes(row('online', { queue: { pending: 0, dead: 2 } }))).toEqual(['DEAD_LETTERS']);
    expect(codes(row('online', { clock: { clockTrusted: false } }))).toEqual(['CLOCK_UNSYNCHRONIZED']);
    expect(codes(row('online', { system: { freeDiskMb: 150 } }))).toEqual(['DISK_LOW']);
    expect(judgeTerminal(row('online', { system: { freeDiskMb: 10 } }), { stateSince: null }, RULES, NOW)[0]!.severity).toBe('critical');
    expect(codes(row('online', { system: { cpuTempC: 85 } }))).toEqual(['TEMPERATURE_HIGH']);
    expect(codes(row('online', { system: { cpuTempC: 85 } }), NOW, { ...RULES, maxCpuTempC: 90 })).toEqual([]);
    expect(codes(row('online', { queue: { pending: 0, dead: 2 } }), NOW, { ...RULES, deadLetters: false })).toEqual([]);
  });

  it("pass on the terminal's own alerts with their hint", () => {
    const raised = judgeTerminal(
      row('online', { alerts: [{ code: 'CLOCK_EARLIER_BOOT_HELD', message: '2 held', hint: 'decide' }] }),
      { stateSince: null },
      RULES,
      NOW,
    );
    expect(raised).toEqual([expect.objectContaining({ code: 'CLOCK_EARLIER_BOOT_HELD', message: '2 held', hint: 'decide' })]);
    expect(codes(row('online', { alerts: [{ code: 'X_Y', message: 'm' }] }), NOW, { ...RULES, terminalAlerts: false })).toEqual([]);
  });
});

describe('the alert book', () => {
  it('keeps when an alert started while it goes on, says when the set changed, and groups by site', () => {
    const book = new AlertBook();
    const lost = judgeTerminal(row('lost'), { stateSince: NOW - 600_000 }, RULES, NOW);
    expect(book.set('plant-a', 'gate-7', lost, NOW)).toBe(true);
    expect(book.set('plant-a', 'gate-7', lost, NOW + 5000)).toBe(false);
    expect(book.forTerminal('plant-a', 'gate-7')[0]!.since).toBe(new Date(NOW).toISOString());
    expect(
      book.set(
        'plant-b',
        'door-1',
        [{ code: 'DEAD_LETTERS', severity: 'warning', site: 'plant-b', terminal: 'door-1', message: '1', hint: 'h' }],
        NOW,
      ),
    ).toBe(true);
    expect(book.all().map((a) => a.code)).toEqual(['TERMINAL_LOST', 'DEAD_LETTERS']);
    expect(book.forSite('plant-b').map((a) => a.terminal)).toEqual(['door-1']);
    expect(book.count('plant-a', 'gate-7')).toBe(1);
    expect(book.set('plant-a', 'gate-7', [], NOW + 6000)).toBe(true);
    expect(book.set('plant-a', 'gate-7', [], NOW + 7000)).toBe(false);
    expect(book.forSite('plant-a')).toEqual([]);
  });
});
