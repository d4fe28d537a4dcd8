import { describe, expect, it } from 'vitest';
import { STATUS_CODES, isStatusCode } from '../../../src/api/status-codes.js';

describe('status codes', () => {
  it('are the exact strings of section 7, odd casing included', () => {
    expect(STATUS_CODES).toContain('Last_NAME_EMPTY');
    expect(STATUS_CODES).not.toContain('LAST_NAME_EMPTY');
    expect(STATUS_CODES).toHaveLength(12);
    expect(isStatusCode('INVALID_TIME_FORMAT')).toBe(true);
    expect(isStatusCode('LAST_NAME_EMPTY')).toBe(false);
  });
});
