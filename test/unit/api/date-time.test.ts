import { describe, expect, it } from 'vitest';
import {
  formatDateTime,
  formatLocal,
  isDateTime,
  parseDateTime,
  requireDateTime,
  toUtcMs,
  tzOffsetFromWire,
  tzOffsetToWire,
} from '../../../src/api/date-time.js';
import { isAgentError } from '../../../src/core/errors.js';

describe('yyyy-MM-dd HH:mm:ss', () => {
  it('parses and formats round trip', () => {
    const ms = parseDateTime('2024-02-29 23:59:58');
    expect(ms).toBe(Date.UTC(2024, 1, 29, 23, 59, 58));
    expect(formatDateTime(ms!)).toBe('2024-02-29 23:59:58');
  });
  it.each([
    '2024-0229 08:00:00', // the interface text's typo
    '2024-02-30 08:00:00',
    '2023-02-29 08:00:00',
    '2024-13-01 08:00:00',
    '2024-01-01 24:00:00',
    '2024-01-01 08:60:00',
    '2024-01-01T08:00:00',
    '2024-01-01 08:00',
    ' 2024-01-01 08:00:00',
    '2024-1-01 08:00:00',
    '',
  ])('refuses %j', (text) => {
    expect(parseDateTime(text)).toBeUndefined();
    expect(isDateTime(text)).toBe(false);
  });
  it('refuses non-strings', () => {
    expect(parseDateTime(20240101)).toBeUndefined();
    expect(parseDateTime(null)).toBeUndefined();
  });
  it('requireDateTime throws API_INVALID_DATE_TIME naming the field', () => {
    try {
      requireDateTime('yesterday', 'inTime');
      expect.unreachable();
    } catch (err) {
      expect(isAgentError(err, 'API_INVALID_DATE_TIME')).toBe(true);
      expect((err as Error).message).toContain('inTime');
    }
  });
});

describe('tzOffset', () => {
  it('formats an instant in a zone east of UTC and back', () => {
    const instant = Date.UTC(2024, 5, 1, 6, 30, 0);
    expect(formatLocal(instant, 330)).toBe('2024-06-01 12:00:00');
    expect(formatLocal(instant, -300)).toBe('2024-06-01 01:30:00');
    expect(toUtcMs('2024-06-01 12:00:00', 330)).toBe(instant);
  });
  it('converts between minutes and the wire unit', () => {
    expect(tzOffsetToWire(330, 'minutes')).toBe(330);
    expect(tzOffsetToWire(330, 'hours')).toBe(5.5);
    expect(tzOffsetFromWire(5.5, 'hours')).toBe(330);
    expect(tzOffsetFromWire(-8, 'hours')).toBe(-480);
    expect(tzOffsetFromWire(60, 'minutes')).toBe(60);
  });
});
