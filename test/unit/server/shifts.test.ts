import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadShiftsFile, parseShifts } from '../../../src/server/shifts.js';
import { AgentError } from '../../../src/core/errors.js';

function refusal(fn: () => unknown): AgentError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('SERVER_SHIFTS_INVALID');
    expect((err as AgentError).hint).toBeTruthy();
    return err as AgentError;
  }
  throw new Error('expected SERVER_SHIFTS_INVALID');
}

describe('shifts configuration', () => {
  it('accepts overnight shifts and computes lengths', () => {
    const s = parseShifts({ defaultShift: 'N', shifts: [{ name: 'N', start: '22:00', end: '06:00', breakMinutes: 30 }] });
    expect(s.byName.get('N')).toEqual({ name: 'N', startMin: 1320, endMin: 360, breakMinutes: 30, lengthMin: 480 });
  });
  it('refuses a default shift that is not defined, duplicates, bad times, a break as long as the shift', () => {
    expect(refusal(() => parseShifts({ defaultShift: 'X', shifts: [{ name: 'A', start: '09:00', end: '17:00' }] })).message).toContain(
      'defaultShift',
    );
    expect(
      refusal(() =>
        parseShifts({
          defaultShift: 'A',
          shifts: [
            { name: 'A', start: '09:00', end: '17:00' },
            { name: 'A', start: '10:00', end: '11:00' },
          ],
        }),
      ).message,
    ).toContain('twice');
    expect(refusal(() => parseShifts({ defaultShift: 'A', shifts: [{ name: 'A', start: '9:00', end: '17:00' }] })).message).toContain(
      'HH:MM',
    );
    expect(
      refusal(() => parseShifts({ defaultShift: 'A', shifts: [{ name: 'A', start: '09:00', end: '10:00', breakMinutes: 60 }] })).message,
    ).toContain('breakMinutes');
  });
  it('loads YAML or JSON files and names a broken one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'shifts-'));
    writeFileSync(join(dir, 'ok.yaml'), 'defaultShift: DAY\nshifts:\n  - { name: DAY, start: "08:00", end: "16:00", breakMinutes: 30 }\n');
    expect(loadShiftsFile(join(dir, 'ok.yaml')).byName.get('DAY')?.lengthMin).toBe(480);
    writeFileSync(join(dir, 'bad.json'), '{"defaultShift": "DAY", "shifts": [');
    expect(refusal(() => loadShiftsFile(join(dir, 'bad.json'))).message).toContain('bad.json');
    expect(refusal(() => loadShiftsFile(join(dir, 'missing.yaml'))).message).toContain('cannot read');
  });
});
