/**
 * The durations of one work-hour report row (section 2.5), in whole minutes, from the sessions
 * (check-in → check-out pairs) of one employee on one day and the shift of that day. All times are
 * the events' local wall-clock times. docs/integrator.md defines each figure with a worked
 * example (checked by test/unit/server/work-hours.test.ts):
 *
 * - shiftHours: the shift's scheduled length, break included (end − start)
 * - shiftWorkHours: shiftHours − the shift's breakMinutes
 * - inOuttime: lastCheckout − firstCheckin
 * - workHours: the sum of the sessions (each check-out − its check-in)
 * - actualBreakHours: inOuttime − workHours (time out between sessions)
 * - productiveHours: the part of workHours inside the shift window [start, end]
 * - productiveWorkHours: min(productiveHours, shiftWorkHours)
 * - totalUnProductiveHours: workHours − productiveHours (worked outside the shift window)
 * - overtime: max(0, workHours − shiftWorkHours)
 * - earlyArrival / lateArrival: how long before / after the shift start the first check-in was
 * - earlyDepature / lateDepature: how long before / after the shift end the last check-out was
 *
 * A check-in without a check-out counts for firstCheckin only: it adds no worked time, and with no
 * check-out at all the departure figures and inOuttime are 0.
 */
import type { WorkHourDuration } from '../api/types.js';
import type { Shift } from './shifts.js';

export type Durations = Record<WorkHourDuration, number>;

export interface Session {
  /** Wall-clock ms of the check-in (as from parseDateTime). */
  inMs: number;
  /** Wall-clock ms of the check-out, or null while open. */
  outMs: number | null;
}

export interface DayResult extends Durations {
  firstCheckinMs: number;
  lastCheckoutMs: number | null;
}

const MIN = 60_000;
const mins = (ms: number) => Math.round(ms / MIN);

/** `dayStartMs`: wall-clock ms of 00:00 of the day the shift starts on. */
export function computeDay(shift: Shift, dayStartMs: number, sessions: Session[]): DayResult {
  const sorted = [...sessions].sort((a, b) => a.inMs - b.inMs);
  const shiftStart = dayStartMs + shift.startMin * MIN;
  const shiftEnd = shiftStart + shift.lengthMin * MIN;
  const firstCheckinMs = sorted[0]!.inMs;
  const closed = sorted.filter((s): s is { inMs: number; outMs: number } => s.outMs !== null && s.outMs >= s.inMs);
  const lastCheckoutMs = closed.length ? Math.max(...closed.map((s) => s.outMs)) : null;

  let workMs = 0;
  let productiveMs = 0;
  for (const s of closed) {
    workMs += s.outMs - s.inMs;
    productiveMs += Math.max(0, Math.min(s.outMs, shiftEnd) - Math.max(s.inMs, shiftStart));
  }
  const shiftHours = shift.lengthMin;
  const shiftWorkHours = shift.lengthMin - shift.breakMinutes;
  const workHours = mins(workMs);
  const productiveHours = mins(productiveMs);
  const inOuttime = lastCheckoutMs === null ? 0 : mins(lastCheckoutMs - firstCheckinMs);
  return {
    shiftHours,
    shiftWorkHours,
    workHours,
    inOuttime,
    productiveHours,
    productiveWorkHours: Math.min(productiveHours, shiftWorkHours),
    overtime: Math.max(0, workHours - shiftWorkHours),
    earlyArrival: Math.max(0, mins(shiftStart - firstCheckinMs)),
    lateArrival: Math.max(0, mins(firstCheckinMs - shiftStart)),
    earlyDepature: lastCheckoutMs === null ? 0 : Math.max(0, mins(shiftEnd - lastCheckoutMs)),
    lateDepature: lastCheckoutMs === null ? 0 : Math.max(0, mins(lastCheckoutMs - shiftEnd)),
    totalUnProductiveHours: workHours - productiveHours,
    actualBreakHours: lastCheckoutMs === null ? 0 : Math.max(0, inOuttime - workHours),
    firstCheckinMs,
    lastCheckoutMs,
  };
}
