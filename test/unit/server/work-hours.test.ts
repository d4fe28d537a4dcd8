/**
 * The worked examples of docs/integrator.md (work-hour report), one per shift kind. Each
 * duration is checked against the figure the guide gives.
 */
import { describe, expect, it } from 'vitest';
import { parseDateTime } from '../../../src/api/date-time.js';
import { computeDay } from '../../../src/server/work-hours.js';
import { parseShifts } from '../../../src/server/shifts.js';

const shifts = parseShifts({
  defaultShift: 'GENERAL',
  shifts: [
    { name: 'GENERAL', start: '09:00', end: '17:00', breakMinutes: 60 },
    { name: 'NIGHT', start: '22:00', end: '06:00', breakMinutes: 30 },
  ],
});
const t = (s: string) => parseDateTime(s)!;
const day = (d: string) => t(`${d} 00:00:00`);

describe('work-hour durations (worked examples of docs/integrator.md)', () => {
  it('example A: GENERAL, in 08:45 out 12:30, in 13:15 out 18:00', () => {
    const r = computeDay(shifts.byName.get('GENERAL')!, day('2024-03-04'), [
      { inMs: t('2024-03-04 08:45:00'), outMs: t('2024-03-04 12:30:00') },
      { inMs: t('2024-03-04 13:15:00'), outMs: t('2024-03-04 18:00:00') },
    ]);
    expect(r).toEqual({
      shiftHours: 480,
      shiftWorkHours: 420,
      workHours: 510,
      inOuttime: 555,
      productiveHours: 435,
      productiveWorkHours: 420,
      overtime: 90,
      earlyArrival: 15,
      lateArrival: 0,
      earlyDepature: 0,
      lateDepature: 60,
      totalUnProductiveHours: 75,
      actualBreakHours: 45,
      firstCheckinMs: t('2024-03-04 08:45:00'),
      lastCheckoutMs: t('2024-03-04 18:00:00'),
    });
  });

  it('example B: GENERAL, late in 09:20, early out 16:30, no break taken', () => {
    const r = computeDay(shifts.byName.get('GENERAL')!, day('2024-03-05'), [
      { inMs: t('2024-03-05 09:20:00'), outMs: t('2024-03-05 16:30:00') },
    ]);
    expect(r).toMatchObject({
      shiftHours: 480,
      shiftWorkHours: 420,
      workHours: 430,
      inOuttime: 430,
      productiveHours: 430,
      productiveWorkHours: 420,
      overtime: 10,
      earlyArrival: 0,
      lateArrival: 20,
      earlyDepature: 30,
      lateDepature: 0,
      totalUnProductiveHours: 0,
      actualBreakHours: 0,
    });
  });

  it('example C: NIGHT 22:00-06:00, in 21:50, out 06:10 the next morning', () => {
    const r = computeDay(shifts.byName.get('NIGHT')!, day('2024-03-04'), [
      { inMs: t('2024-03-04 21:50:00'), outMs: t('2024-03-05 06:10:00') },
    ]);
    expect(r).toMatchObject({
      shiftHours: 480,
      shiftWorkHours: 450,
      workHours: 500,
      inOuttime: 500,
      productiveHours: 480,
      productiveWorkHours: 450,
      overtime: 50,
      earlyArrival: 10,
      lateArrival: 0,
      earlyDepature: 0,
      lateDepature: 10,
      totalUnProductiveHours: 20,
      actualBreakHours: 0,
    });
  });

  it('an open check-in counts for firstCheckin only', () => {
    const r = computeDay(shifts.byName.get('GENERAL')!, day('2024-03-06'), [{ inMs: t('2024-03-06 09:00:00'), outMs: null }]);
    expect(r).toMatchObject({
      workHours: 0,
      inOuttime: 0,
      earlyDepature: 0,
      lateDepature: 0,
      lateArrival: 0,
      earlyArrival: 0,
      actualBreakHours: 0,
      lastCheckoutMs: null,
    });
  });
});
