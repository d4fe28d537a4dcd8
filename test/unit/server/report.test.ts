import { describe, expect, it } from 'vitest';
import { parseDateTime } from '../../../src/api/date-time.js';
import { periodEnd, periodStart } from '../../../src/server/report.js';

const t = (s: string) => parseDateTime(s)!;
const day = (d: string) => t(`${d} 00:00:00`);

describe('periods', () => {
  it('WEEKLY starts on Monday, MONTHLY on the first', () => {
    const wed = day('2024-03-06');
    expect(periodStart(wed, 'WEEKLY')).toBe(day('2024-03-04'));
    expect(periodEnd(day('2024-03-04'), 'WEEKLY')).toBe(day('2024-03-10'));
    expect(periodStart(day('2024-03-10'), 'WEEKLY')).toBe(day('2024-03-04')); // Sunday
    expect(periodStart(wed, 'MONTHLY')).toBe(day('2024-03-01'));
    expect(periodEnd(day('2024-02-01'), 'MONTHLY')).toBe(day('2024-02-29'));
    expect(periodStart(wed, 'DAILY')).toBe(wed);
  });
});
