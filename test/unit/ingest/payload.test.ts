/** The MQTT event payload as the ingest reads it: what becomes an attendance event, what is refused and why. */
import { describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES, parsePayload } from '../../../src/ingest/payload.js';

const base = {
  id: '01HZX0000000000000000000AB',
  terminal: 'gate-1',
  site: 'plant-a',
  employeeCode: 'E7',
  direction: 'in',
  time: '2026-03-02 07:58:00',
  tzOffset: 60,
  inTime: null,
  shift: null,
  source: 'finger',
  score: 0.91,
  clockSynced: true,
  clockCorrected: false,
  recordedAt: '2026-03-02T06:58:00.120Z',
};
const parse = (v: unknown) => parsePayload(Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)));

describe('parsePayload', () => {
  it('turns a check-in into an attendance event, with its id, terminal and record time', () => {
    expect(parse(base)).toEqual({
      ok: true,
      value: {
        id: base.id,
        terminal: 'gate-1',
        recordedAtMs: Date.parse(base.recordedAt),
        event: { employeeCode: 'E7', inTime: '2026-03-02 07:58:00', tzOffset: 60 },
      },
    });
  });

  it('a check-out carries the inTime it closes and the shift when the terminal knew them; unknown fields are ignored', () => {
    const r = parse({
      ...base,
      direction: 'out',
      time: '2026-03-02 17:01:00',
      inTime: '2026-03-02 07:58:00',
      shift: 'NIGHT',
      firmware: 'x',
    });
    expect(r.ok && r.value.event).toEqual({
      employeeCode: 'E7',
      outTime: '2026-03-02 17:01:00',
      inTime: '2026-03-02 07:58:00',
      shift: 'NIGHT',
      tzOffset: 60,
    });
    const noRecord = parse({ ...base, recordedAt: 'yesterday' });
    expect(noRecord.ok && noRecord.value.recordedAtMs).toBeNull();
  });

  it.each([
    ['not JSON', '{"id": ', /not JSON/],
    ['no id', { ...base, id: undefined }, /^id:/],
    ['a direction that is neither in nor out', { ...base, direction: 'sideways' }, /^direction:/],
    ['a time not in the date-time form', { ...base, time: '2026-03-02T07:58:00' }, /^time:.*yyyy-MM-dd HH:mm:ss/],
    ['a tzOffset beyond 14 hours', { ...base, tzOffset: 900 }, /^tzOffset:/],
    ['an employee code of 65 characters', { ...base, employeeCode: 'x'.repeat(65) }, /^employeeCode:.*longer than 64/],
    ['an employee code with a slash', { ...base, employeeCode: 'E/7' }, /^employeeCode:.*U\+002F/],
    ['an employee code with a bidi override', { ...base, employeeCode: 'E\u202e7' }, /^employeeCode:.*U\+202E/],
    ['an employee code that is ..', { ...base, employeeCode: '..' }, /^employeeCode:.*not an employee code/],
    [
      'a full-width employee code',
      { ...base, employeeCode: 'Ｅ１００１' },
      /^employeeCode:.*U\+FF25, a compatibility form.*write it as "E1001"/,
    ],
    ['an array', [base], /\(message\)/],
  ])('refuses %s, saying what is wrong', (_what, payload, reason) => {
    const r = parse(payload);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });

  it('passes a code sent decomposed on in NFC, as the service stores it', () => {
    const r = parse({ ...base, employeeCode: 'Jose\u0301' });
    expect(r.ok && r.value.event.employeeCode).toBe('Jos\u00e9');
  });

  it(`refuses a message over ${MAX_PAYLOAD_BYTES} bytes without reading it`, () => {
    const r = parsePayload(Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20));
    expect(!r.ok && r.reason).toContain('more than');
  });
});

describe('parsePayload: dates that do not exist', () => {
  it.each([
    ['time', { time: '2026-02-30 08:00:00' }],
    ['inTime', { direction: 'out', inTime: '2026-13-01 08:00:00' }],
  ])('refuses a %s that does not exist', (field, change) => {
    const r = parsePayload(Buffer.from(JSON.stringify({ ...base, ...change })));
    expect(!r.ok && r.reason).toMatch(new RegExp(`^${field}: .* not a date-time that exists`));
  });
});
