import { describe, expect, it } from 'vitest';
import type { AttendanceEvent, Envelope } from '../../../src/api/types.js';
import type { OutboxItem } from '../../../src/store/outbox.js';
import { ApiSink, toAttendanceEvent } from '../../../src/upload/api-sink.js';

function item(seq: number, code: string, direction: 'in' | 'out' = 'in', inTime: string | null = null): OutboxItem {
  return {
    seq,
    id: `ID${seq}`,
    employeeCode: code,
    direction,
    localTime: '2026-03-02 08:00:00',
    tzOffset: 60,
    inTime,
    inId: null,
    shift: null,
    source: 'finger',
    score: 90,
    terminalId: 't',
    createdAt: 0,
    clockSynced: true,
    clockCorrected: false,
    clockReleased: false,
    timeSource: 'clock',
    bootId: 'b',
    monotonicMs: 0,
    state: 'pending',
    attempts: 0,
  };
}
const signal = new AbortController().signal;

/** A service double that refuses a whole request naming no item when it contains `poison`. */
function client(poison: string, calls: number[]) {
  return {
    async addEvents(events: AttendanceEvent[]): Promise<Envelope<Envelope<AttendanceEvent>[]>> {
      calls.push(events.length);
      if (events.some((e) => e.employeeCode === poison))
        return { statusCode: 'USER_NOT_AVAILABLE', statusDescription: `no user ${poison}`, returnValue: null };
      return { statusCode: 'SUCCESS', returnValue: events.map((e) => ({ statusCode: 'SUCCESS', returnValue: e })) };
    },
  };
}

describe('ApiSink', () => {
  it('maps punches to events: a check-in by inTime, a check-out by outTime with the inTime it closes', () => {
    expect(toAttendanceEvent(item(1, 'A'))).toEqual({ employeeCode: 'A', inTime: '2026-03-02 08:00:00', tzOffset: 60 });
    expect(toAttendanceEvent({ ...item(2, 'A', 'out', '2026-03-02 07:00:00'), shift: 'NIGHT' })).toEqual({
      employeeCode: 'A',
      outTime: '2026-03-02 08:00:00',
      inTime: '2026-03-02 07:00:00',
      tzOffset: 60,
      shift: 'NIGHT',
    });
  });

  it('per-item statuses decide each fate', async () => {
    const statuses = ['SUCCESS', 'USER_NOT_AVAILABLE', 'INVALID_PARAMETERS', 'ERROR', 'SOMETHING_NEW'];
    const sink = new ApiSink({
      addEvents: async (events) => ({
        statusCode: 'SUCCESS',
        returnValue: events.map((_, i) => ({ statusCode: statuses[i]!, statusDescription: `d${i}`, returnValue: null })),
      }),
    });
    const out = await sink.deliver(
      statuses.map((_, i) => item(i, `E${i}`)),
      { signal },
    );
    expect(out).toEqual([
      { outcome: 'delivered' },
      { outcome: 'dead', status: 'USER_NOT_AVAILABLE', description: 'd1' },
      { outcome: 'dead', status: 'INVALID_PARAMETERS', description: 'd2' },
      { outcome: 'retry', status: 'ERROR', description: 'd3' },
      { outcome: 'retry', status: 'SOMETHING_NEW', description: 'd4' },
    ]);
  });

  it('a whole request refused without per-item results is split until the poison item is alone', async () => {
    const calls: number[] = [];
    const sink = new ApiSink(client('P', calls));
    const items = Array.from({ length: 8 }, (_, i) => item(i, i === 5 ? 'P' : `E${i}`));
    const out = await sink.deliver(items, { signal });
    expect(out.map((o) => o.outcome)).toEqual([
      'delivered',
      'delivered',
      'delivered',
      'delivered',
      'delivered',
      'dead',
      'delivered',
      'delivered',
    ]);
    expect(out[5]).toEqual({ outcome: 'dead', status: 'USER_NOT_AVAILABLE', description: 'no user P' });
    expect(calls).toEqual([8, 4, 4, 2, 1, 1, 2]);
  });

  it('a top-level ERROR retries every item; a wrong number of results is a retryable bad response', async () => {
    const err = new ApiSink({ addEvents: async () => ({ statusCode: 'ERROR', statusDescription: 'db down', returnValue: null }) });
    expect(await err.deliver([item(1, 'A'), item(2, 'B')], { signal })).toEqual([
      { outcome: 'retry', status: 'ERROR', description: 'db down' },
      { outcome: 'retry', status: 'ERROR', description: 'db down' },
    ]);
    const short = new ApiSink({
      addEvents: async () => ({ statusCode: 'SUCCESS', returnValue: [{ statusCode: 'SUCCESS', returnValue: null }] }),
    });
    await expect(short.deliver([item(1, 'A'), item(2, 'B')], { signal })).rejects.toMatchObject({
      code: 'API_BAD_RESPONSE',
      retryable: true,
    });
  });
});
