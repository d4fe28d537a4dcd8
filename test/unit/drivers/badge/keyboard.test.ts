// Keyboard-wedge reports: typed text comes back character for character, a key held over
// several reports counts once, the rollover report and keys without a character type nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyboardDecoder, typeText } from '../../../../drivers/badge/keyboard.js';

const decodeAll = (reports: Buffer[]) => {
  const d = new KeyboardDecoder();
  return reports.map((r) => d.decode(r)).join('');
};

describe('keyboard-wedge reports', () => {
  it('type and read back digits, hex letters, commas and line ends', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9A-Fa-f,:;\n]{0,40}$/), (text) => {
        expect(decodeAll(typeText(text))).toBe(text);
      }),
      { numRuns: 200 },
    );
    expect(typeText('1').map((r) => [...r])).toEqual([
      [0, 0, 0x1e, 0, 0, 0, 0, 0],
      [0, 0, 0, 0, 0, 0, 0, 0],
    ]);
  });

  it('counts a key held over several reports once, and a repeated character pressed twice twice', () => {
    const press = Buffer.from([0, 0, 0x27, 0, 0, 0, 0, 0]); // '0'
    const release = Buffer.alloc(8);
    expect(decodeAll([press, press, press, release, press, release])).toBe('00');
    // Two keys down together, the second added in a later report.
    expect(decodeAll([Buffer.from([0, 0, 0x1e, 0, 0, 0, 0, 0]), Buffer.from([0, 0, 0x1e, 0x1f, 0, 0, 0, 0]), release])).toBe('12');
  });

  it('ignores the too-many-keys report and keys without a character, reads keypad digits and Enter, skips a report id', () => {
    expect(
      decodeAll([
        Buffer.from([0, 0, 1, 1, 1, 1, 1, 1]),
        Buffer.from([0, 0, 0x3a, 0, 0, 0, 0, 0]),
        Buffer.from([0, 0, 0x59, 0, 0, 0, 0, 0]),
        Buffer.from([0, 0, 0x58, 0, 0, 0, 0, 0]),
      ]),
    ).toBe('1\n');
    expect(decodeAll([Buffer.from([1, 0x02, 0, 0x04, 0, 0, 0, 0, 0])])).toBe('A');
    expect(decodeAll([Buffer.from([0])])).toBe('');
  });
});
