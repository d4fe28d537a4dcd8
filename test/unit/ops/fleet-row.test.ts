import { describe, expect, it } from 'vitest';
import { fleetRow, oldestPendingAgeNow, parseInfo, parseMetrics } from '../../../src/ops/fleet-row.js';

const metrics = {
  at: '2026-03-02T08:00:00.000Z',
  queue: { pending: 12, dead: 1, delivered: 340, oldestPendingAgeSec: 180 },
  lastDelivery: '2026-03-02T07:59:12.114Z',
  scanners: [
    { key: 'r30x:/dev/fp0', status: 'ready', family: 'r30x' },
    { key: 'iris:sim', status: 'disconnected', family: 'iris-hid' },
  ],
  identification: { p95Ms: 18.5 },
  capture: { punched: 40, modulePathP95Ms: 130, hostPathP95Ms: 410, lastPunchAt: '2026-03-02T07:58:00.000Z' },
  clock: { clockTrusted: false },
  alerts: [{ code: 'CLOCK_HELD_LONG', message: '3 punches waited', hint: 'check NTP' }],
  system: { freeDiskMb: 900, cpuTempC: 61.2, rssMb: 120.5 },
  lastError: 'api: API_TIMEOUT: no answer',
  lastErrorAt: '2026-03-02T07:50:00.000Z',
};

describe('a fleet row', () => {
  it('takes every figure of the table from state, info and metrics', () => {
    const row = fleetRow(
      'plant-a',
      'gate-7',
      'online',
      parseInfo({ at: '2026-03-02T07:00:00.000Z', version: '1.2.3', clock: { synchronized: true } }),
      parseMetrics(metrics),
    );
    expect(row).toMatchObject({
      key: 'plant-a/gate-7',
      state: 'online',
      lastSeen: '2026-03-02T08:00:00.000Z',
      queuePending: 12,
      oldestPendingAgeSec: 180,
      dead: 1,
      delivered: 340,
      lastDelivery: '2026-03-02T07:59:12.114Z',
      lastPunchAt: '2026-03-02T07:58:00.000Z',
      scannersReady: 1,
      identificationP95Ms: 18.5,
      captureP95Ms: 410,
      // the metrics are newer than the info: their clock wins
      clockSynchronized: false,
      cpuTempC: 61.2,
      freeDiskMb: 900,
      rssMb: 120.5,
      version: '1.2.3',
      lastError: 'api: API_TIMEOUT: no answer',
      punched: 40,
    });
    expect(row.scanners).toHaveLength(2);
    expect(row.terminalAlerts).toEqual([{ code: 'CLOCK_HELD_LONG', message: '3 punches waited', hint: 'check NTP' }]);
  });

  it('leaves what is unknown null, and reads a field of the wrong type or size as unknown instead of failing', () => {
    expect(fleetRow('s', 't', null, null, null)).toMatchObject({
      state: null,
      queuePending: null,
      scanners: [],
      scannersReady: null,
      version: null,
      clockSynchronized: null,
    });
    const bad = parseMetrics({
      at: 'yesterday',
      queue: { pending: 'many', dead: -1, oldestPendingAgeSec: 5 },
      scanners: 'r30x',
      system: [],
      lastError: 'x'.repeat(5000),
      alerts: [42],
    });
    expect(bad).not.toBeNull();
    const row = fleetRow('s', 't', 'online', null, bad);
    expect(row).toMatchObject({
      metricsAt: null,
      queuePending: null,
      dead: null,
      oldestPendingAgeSec: 5,
      scanners: [],
      cpuTempC: null,
      lastError: null,
    });
    expect(row.terminalAlerts).toEqual([{ code: '?', message: '', hint: null }]);
    expect(parseMetrics('not an object')).toBeNull();
    expect(parseMetrics([1, 2])).toBeNull();
  });

  it('ages the oldest pending punch from when the metrics were taken', () => {
    const at = Date.parse('2026-03-02T08:00:00.000Z');
    expect(oldestPendingAgeNow({ oldestPendingAgeSec: 180, metricsAt: '2026-03-02T08:00:00.000Z' }, at + 60_000)).toBe(240);
    expect(oldestPendingAgeNow({ oldestPendingAgeSec: null, metricsAt: '2026-03-02T08:00:00.000Z' }, at)).toBeNull();
    expect(oldestPendingAgeNow({ oldestPendingAgeSec: 30, metricsAt: null }, at)).toBe(30);
  });
});
