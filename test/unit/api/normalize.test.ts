import { describe, expect, it } from 'vitest';
import { isEnvelope, normalizeEvent, normalizeStatus, normalizeUser, normalizeWorkHourRow, toNumber } from '../../../src/api/normalize.js';
import { WORK_HOUR_DURATIONS } from '../../../src/api/types.js';

describe('tolerant readers', () => {
  it('reads status as a string or a bare number', () => {
    expect(normalizeStatus(0)).toBe('0');
    expect(normalizeStatus('1')).toBe('1');
    expect(normalizeStatus(undefined)).toBeUndefined();
    expect(normalizeUser({ employeeCode: 'E1', firstName: 'A', lastName: 'B', status: 1 }).status).toBe('1');
  });
  it('reads shift from shift or shiftName, and converts tzOffset to minutes', () => {
    expect(normalizeEvent({ employeeCode: 'E1', inTime: '2024-01-01 08:00:00', shiftName: 'NIGHT', tzOffset: 2 }, 'hours')).toEqual({
      employeeCode: 'E1',
      inTime: '2024-01-01 08:00:00',
      outTime: null,
      shift: 'NIGHT',
      tzOffset: 120,
    });
    expect(normalizeEvent({ employeeCode: 'E1', outTime: '2024-01-01 08:00:00', shift: 'DAY', tzOffset: '60' }).shift).toBe('DAY');
    expect(normalizeEvent({ employeeCode: 'E1', outTime: '2024-01-01 08:00:00', shift: '' }).shift).toBeNull();
  });
  it('maps the report alternative names onto 2.5 and numbers from strings', () => {
    const row = normalizeWorkHourRow({
      employeeCode: 'E1',
      firstName: 'A',
      shiftWorkTime: 420,
      workTime: '510',
      inOutTime: 555,
      productiveWorkTime: 420,
      totalUnProductiveTime: 75,
      totalBreakHours: 45,
      lastCheckin: '2024-03-04 18:00:00',
    });
    expect(row).toMatchObject({
      shiftWorkHours: 420,
      workHours: 510,
      inOuttime: 555,
      productiveWorkHours: 420,
      totalUnProductiveHours: 75,
      actualBreakHours: 45,
      lastCheckout: '2024-03-04 18:00:00',
      shiftHours: 0,
    });
    for (const d of WORK_HOUR_DURATIONS) expect(typeof row[d]).toBe('number');
  });
  it('prefers the 2.5 name when both are present', () => {
    expect(normalizeWorkHourRow({ workHours: 1, workTime: 2 }).workHours).toBe(1);
  });
  it('recognizes envelopes and numbers', () => {
    expect(isEnvelope({ statusCode: 'SUCCESS', returnValue: null })).toBe(true);
    expect(isEnvelope({ status: 'ok' })).toBe(false);
    expect(isEnvelope([])).toBe(false);
    expect(toNumber('x')).toBeUndefined();
    expect(toNumber(' ')).toBeUndefined();
  });
});
