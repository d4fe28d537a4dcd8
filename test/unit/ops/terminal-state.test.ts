import { describe, expect, it } from 'vitest';
import {
  clockReading,
  deriveHealth,
  describeState,
  StateSince,
  stateOfInfo,
  stateOfMetrics,
  terminalState,
  type HealthInputs,
} from '../../../src/ops/terminal-state.js';

const FINE: HealthInputs = {
  scanners: [{ key: 'r30x:/dev/fp0', status: 'ready' }],
  clock: { trusted: true, source: 'timedatectl' },
  outbox: { capFullPercent: 10, maxPending: 100 },
  problems: [],
  alerts: [],
};

describe('the terminal state model', () => {
  it('judges each cause degraded with its code, and all of them at once', () => {
    expect(deriveHealth(FINE)).toEqual({ state: 'online', reasons: [] });
    const codes = (i: Partial<HealthInputs>) => deriveHealth({ ...FINE, ...i }).reasons.map((r) => r.code);
    expect(codes({ scanners: [{ key: 'r30x:/dev/fp0', status: 'disconnected' }] })).toEqual(['SCANNER_NOT_READY']);
    expect(codes({ clock: { trusted: false, source: 'timedatectl' } })).toEqual(['CLOCK_UNTRUSTED']);
    expect(codes({ outbox: { capFullPercent: 100, maxPending: 1 } })).toEqual(['OUTBOX_FULL']);
    expect(codes({ outbox: { capFullPercent: 99.9 } })).toEqual([]);
    expect(codes({ problems: [{ source: 'upload:api', message: 'API_UNREACHABLE: api: refused' }] })).toEqual(['UPSTREAM_FAILING']);
    expect(codes({ problems: [{ source: 'modules:r30x', message: 'flash' }] })).toEqual([]);
    expect(codes({ alerts: [{ code: 'CLOCK_HELD_LONG' }] })).toEqual(['TERMINAL_ALERT']);
    const all = deriveHealth({
      scanners: [{ key: 'fp', status: 'connecting' }],
      clock: { trusted: false, source: 'seen' },
      outbox: { capFullPercent: 100, maxPending: 1 },
      problems: [{ source: 'upload:api', message: 'API_UNREACHABLE: api: refused' }],
      alerts: [],
    });
    expect(all.state).toBe('degraded');
    expect(describeState(all)).toBe(
      'degraded: scanner fp connecting; clock not trusted (seen): punches are stamped untrusted and held until it is; outbox full (1 pending and dead): new punches are refused; API_UNREACHABLE: api: refused',
    );
  });

  it('reads the clock as synchronized only when a time service confirmed it', () => {
    expect(clockReading(true, 'timedatectl')).toBe('synchronized');
    expect(clockReading(true, 'assumed')).toBe('assumed');
    expect(clockReading(false, 'assumed')).toBe('unsynchronized');
    expect(clockReading(null, 'chrony')).toBeNull();
  });

  it('keeps "since" from the last change of state, not from the last publish', () => {
    const since = new StateSince<string>();
    expect(since.update('online', 1000)).toBe(1000);
    expect(since.update('online', 21_000)).toBe(1000);
    expect(since.update('degraded', 30_000)).toBe(30_000);
    expect(since.update('degraded', 50_000)).toBe(30_000);
    since.reset();
    expect(since.update('degraded', 60_000)).toBe(60_000);
  });

  it('shows a running terminal as its metrics say, a stopped or lost one as its state topic says', () => {
    const metrics = stateOfMetrics({
      health: 'degraded',
      state: 'degraded',
      stateSince: '2026-03-02T08:00:00.000Z',
      reasons: [{ code: 'SCANNER_NOT_READY', message: 'scanner fp disconnected' }, 'junk'],
      degraded: ['scanner fp disconnected'],
      clock: { clockTrusted: true, clockSource: 'assumed' },
    });
    const info = stateOfInfo({ at: '2026-03-02T07:00:00.000Z', clock: { synchronized: true, clockSource: 'assumed' } });
    const lastSeen = '2026-03-02T08:05:00.000Z';
    // An agent that published `degraded` on its state topic, or an older one that said only `online`.
    for (const word of ['degraded', 'online']) {
      expect(terminalState({ word, metrics, info, lastSeen })).toEqual({
        state: 'degraded',
        reasons: [{ code: 'SCANNER_NOT_READY', message: 'scanner fp disconnected' }],
        since: Date.parse('2026-03-02T08:00:00.000Z'),
        sinceExact: true,
        clock: 'assumed',
      });
    }
    // Lost: the state topic's word, since the change this view saw (or last seen, estimated).
    expect(terminalState({ word: 'lost', metrics, info, lastSeen, changedAt: 123 })).toMatchObject({
      state: 'lost',
      reasons: [],
      since: 123,
    });
    expect(terminalState({ word: 'lost', metrics, info, lastSeen })).toMatchObject({ since: Date.parse(lastSeen), sinceExact: false });
    // An older agent's sentences without codes still say why.
    const old = stateOfMetrics({ health: 'degraded', degraded: ['scanner fp disconnected'] });
    expect(terminalState({ word: 'online', metrics: old, info, lastSeen })).toMatchObject({
      state: 'degraded',
      reasons: [{ code: 'DEGRADED', message: 'scanner fp disconnected' }],
      since: Date.parse('2026-03-02T07:00:00.000Z'),
      sinceExact: false,
    });
    // The metrics' clock is newer than the info's.
    const unsynced = stateOfMetrics({ health: 'ok', clock: { clockTrusted: false, clockSource: 'timedatectl' } });
    expect(terminalState({ word: 'online', metrics: unsynced, info, lastSeen }).clock).toBe('unsynchronized');
  });
});
