import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyringOf } from '../../../src/ops/ops-auth.js';
import { checkTelemetry, readStatePayload, TelemetryLedger, TelemetrySigner } from '../../../src/ops/telemetry-auth.js';
import { ConsoleFleet } from '../../../src/console/console-fleet.js';
import { FleetMonitor } from '../../../src/ops/fleet.js';

const key = randomBytes(32);
const keyring = keyringOf({ opsKey: key, opsKeys: {} });
const subject = { site: 's1', terminal: 'gate-1', leaf: 'metrics' };

function signer(conn: number, terminal = 'gate-1', k = key): TelemetrySigner {
  const s = new TelemetrySigner({ site: 's1', terminal, key: k });
  s.beginConnection(conn);
  return s;
}

const roundTrip = <T>(v: T): Record<string, unknown> => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

describe('signed telemetry', () => {
  it('verifies what was signed, through JSON, and nothing else', () => {
    const doc = roundTrip(signer(5).sign('metrics', { at: '2026-03-01T00:00:00.000Z', queue: { pending: 1.5 }, alerts: [] }));
    expect(checkTelemetry(keyring, subject, doc)).toEqual({ verified: true, conn: 5, seq: 1, will: false });
    expect(checkTelemetry(keyring, subject, { ...doc, queue: { pending: 0 } })).toMatchObject({ verified: false });
    expect(checkTelemetry(keyring, { ...subject, terminal: 'gate-2' }, doc)).toMatchObject({ verified: false });
    expect(checkTelemetry(keyring, { ...subject, leaf: 'info' }, doc)).toMatchObject({ verified: false });
    expect(checkTelemetry(keyringOf({ opsKey: randomBytes(32), opsKeys: {} }), subject, doc)).toMatchObject({ verified: false });
    expect(checkTelemetry(keyring, subject, { at: 'x' })).toEqual({ verified: false, reason: 'not signed' });
    expect(checkTelemetry(keyring, subject, { ...doc, sig: { kid: 'site' } })).toMatchObject({ verified: false });
    expect(checkTelemetry(null, subject, doc)).toMatchObject({ verified: false });
  });

  it('orders by connection then sequence, the will last in its connection: a replayed online after lost is stale', () => {
    const ledger = new TelemetryLedger(keyring);
    const state = { site: 's1', terminal: 'gate-1', leaf: 'state' };
    const first = signer(100);
    const will1 = roundTrip(first.signWill('state', { state: 'lost' }));
    const online1 = roundTrip(first.sign('state', { state: 'online' }));
    expect(ledger.judge(state, online1)).toBe('verified');
    expect(ledger.judge(state, will1)).toBe('verified');
    expect(ledger.judge(state, online1)).toBe('stale');
    const second = signer(101);
    expect(ledger.judge(state, roundTrip(second.sign('state', { state: 'online' })))).toBe('verified');
    expect(ledger.judge(state, will1)).toBe('stale');
    // A will that is not at the will's place is malformed.
    const fake = roundTrip(second.sign('state', { state: 'lost' }));
    (fake.sig as Record<string, unknown>).will = true;
    expect(ledger.judge(state, fake)).toBe('unverified');
  });

  it('reads the signed state document and the bare word of older agents', () => {
    expect(readStatePayload('online')).toEqual({ doc: null, state: 'online' });
    expect(readStatePayload('{"state":"lost","sig":{}}')).toMatchObject({ state: 'lost' });
    expect(readStatePayload('{not json')).toEqual({ doc: null, state: null });
  });
});

describe('views of signed telemetry', () => {
  const state = (s: TelemetrySigner, word: string) => Buffer.from(JSON.stringify(s.sign('state', { state: word })));

  it('console: an unsigned message never displaces a signed terminal, and fakes never take its place', () => {
    const f = new ConsoleFleet({ prefix: 'a', historyHours: 1, maxPayloadBytes: 4096, maxTerminals: 10, maxUnverified: 5, keyring });
    const real = signer(1);
    expect(f.apply('a/s1/gate-1/state', state(real, 'online'), true)?.verified).toBe(true);
    expect(f.apply('a/s1/gate-1/state', Buffer.from('lost'), false)).toBeNull();
    expect(f.get('s1/gate-1')?.state).toBe('online');
    for (let i = 0; i < 100; i++) f.apply(`a/s1/fake-${i}/state`, Buffer.from('online'), true);
    expect(f.unverified).toBe(5);
    const newcomer = signer(1, 'gate-new');
    expect(f.apply('a/s1/gate-new/state', state(newcomer, 'online'), true)?.verified).toBe(true);
    expect(f.size).toBe(7);
    // A fake that later signs (a real terminal of an older agent upgraded) starts afresh, verified.
    expect(f.apply('a/s1/fake-0/state', state(signer(1, 'fake-0'), 'online'), true)?.verified).toBe(true);
    expect(f.unverified).toBe(4);
  });

  it('console: ignores unsigned terminals altogether when configured so', () => {
    const f = new ConsoleFleet({ prefix: 'a', historyHours: 1, maxPayloadBytes: 4096, keyring, ignoreUnverified: true });
    expect(f.apply('a/s1/fake/state', Buffer.from('online'), true)).toBeNull();
    expect(f.size).toBe(0);
  });

  it('fleet: a forged state of a signed terminal is not shown; the check names it and leaves fakes out', () => {
    const m = new FleetMonitor({ prefix: 'a', keyring });
    const real = signer(1);
    m.apply('a/s1/gate-1/metrics', Buffer.from(JSON.stringify(real.sign('metrics', { at: new Date().toISOString() }))));
    m.apply('a/s1/gate-1/state', Buffer.from('online'));
    m.apply('a/s1/fake/state', Buffer.from('lost'));
    expect(m.get('s1/gate-1')).toMatchObject({ state: null, verified: true });
    expect(m.get('s1/fake')).toMatchObject({ state: 'lost', verified: false });
  });
});
