import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { forTerminal, jsonLine, oneLine, sanitizedStream } from '../../../src/cli/output.js';

const HOSTILE = '\x1b]0;pwned title\x07\x1b[2J\x1b[31mred\x1b[0m \x9b31mc1\x9dosc\x9c \x1bPdcs\x1b\\ab\rcd\x00\x08\x7f\u202eevil\u202c end';

describe('forTerminal', () => {
  it('drops escape sequences whole (OSC title, clear screen, colours, C1 CSI/OSC, DCS) and every other control', () => {
    const clean = forTerminal(HOSTILE);
    expect(clean).toBe('red c1 abcdevil end');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the assertion is about control characters
    expect(clean).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  });

  it('keeps newlines, tabs and every printable character (accents, CJK, emoji)', () => {
    const text = 'SITE\tTERMINAL\nplant-nörth\t門-1 ✅ Ｅ１００１\n';
    expect(forTerminal(text)).toBe(text);
  });

  it('an unterminated OSC eats at most the rest of its line, not the lines after it', () => {
    expect(forTerminal('a\x1b]0;never ends\nnext line\n')).toBe('a\nnext line\n');
  });

  it('oneLine makes a column value of it', () => {
    expect(oneLine('first\nsecond\tthird\x1b[K')).toBe('first second third');
  });
});

describe('jsonLine', () => {
  it('escapes what JSON.stringify leaves raw (DEL, C1, bidi) and reads back as the same value', () => {
    const value = { lastError: HOSTILE, name: 'gate\u2028one' };
    const line = jsonLine(value);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the assertion is about control characters
    expect(line).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
    expect(JSON.parse(line)).toEqual(value);
  });
});

describe('sanitizedStream', () => {
  it('strips what is written and keeps the target stream for the rest (write answer, events)', async () => {
    const target = new PassThrough();
    let got = '';
    target.on('data', (d: Buffer) => {
      got += d.toString();
    });
    const s = sanitizedStream(target as unknown as NodeJS.WriteStream);
    expect(s.write('x\x1b[2Jy\n')).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(got).toBe('xy\n');
    let drained = false;
    s.once('drain', () => {
      drained = true;
    });
    target.emit('drain');
    expect(drained).toBe(true);
  });
});
