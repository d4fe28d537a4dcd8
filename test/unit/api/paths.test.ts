import { describe, expect, it } from 'vitest';
import { apiPaths } from '../../../src/api/paths.js';

describe('path forms', () => {
  it('builds both forms; the report only under /api/attendance', () => {
    const a = apiPaths('api');
    const b = apiPaths('attendance');
    expect(a.userByCode('E 1/x')).toBe('/api/attendance/user/E%201%2Fx/');
    expect(b.event).toBe('/attendance/api/event');
    expect(a.workHourReport).toBe('/api/attendance/report/workhour');
    expect(b.workHourReport).toBeUndefined();
  });
});
