// The badge line formats: every codec round-trips, a published RDM6300 frame decodes to the
// number printed on its card, the same EM4100 card reads the same on a decimal, a hex and a
// Wiegand-34 reader, and a flipped bit, a lost byte or line noise are told apart.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BADGE_CODECS, BADGE_FORMATS, badgeCodec, credentialOf, ETX, STX, type BadgeCard } from '../../../../drivers/badge/formats.js';
import { BADGE_LINE_FORMATS } from '../../../../src/config/config.js';

const strip = (frame: string, delimiter: string) => frame.slice(0, frame.length - delimiter.length);

describe('badge line formats', () => {
  it('are the ones the configuration accepts', () => {
    expect([...BADGE_FORMATS]).toEqual([...BADGE_LINE_FORMATS]);
  });

  it('round-trips every card number of each format, split into frames by its delimiter', () => {
    for (const format of BADGE_FORMATS) {
      const codec = BADGE_CODECS[format];
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** codec.bits - 1 }), fc.constantFrom<'bits' | 'pair'>('bits', 'pair'), (value, style) => {
          const frame = codec.encode(value, { style });
          expect(frame.endsWith(codec.delimiter)).toBe(true);
          expect(codec.decode(strip(frame, codec.delimiter))).toEqual({ ok: true, card: { bits: codec.bits, value } });
        }),
        { numRuns: 200 },
      );
    }
  });

  it('decodes a published RDM6300 frame to the number printed on the card (XOR checksum checked)', () => {
    // 02 "100086F44426" 03: customer 0x10, card 0x0086F444, checksum 0x26; the fob reads 0008844356.
    const frame = `${String.fromCharCode(STX)}100086F44426`;
    expect(BADGE_CODECS['em4100-hex'].decode(frame)).toEqual({ ok: true, card: { bits: 32, value: 8844356 } });
    expect(BADGE_CODECS['em4100-hex'].decode(`${String.fromCharCode(STX)}100086F44427`)).toMatchObject({ ok: false, kind: 'checksum' });
  });

  it('gives one EM4100 card the same credential on a decimal, a hex and a Wiegand-34 reader, and 24 bits on Wiegand 26', () => {
    const dec = BADGE_CODECS['em4100-dec'].decode('0008844356\r');
    const hex = BADGE_CODECS['em4100-hex'].decode(
      strip(BADGE_CODECS['em4100-hex'].encode(8844356, { customer: 0x10 }), String.fromCharCode(ETX)),
    );
    const w34 = BADGE_CODECS.wiegand34.decode('134,62532\r');
    const credentials = [dec, hex, w34].map((v) => (v.ok ? credentialOf(v.card) : v.kind));
    expect(credentials).toEqual(['32:8844356', '32:8844356', '32:8844356']);
    const w26 = BADGE_CODECS.wiegand26.decode('134,62532');
    expect(w26.ok && credentialOf(w26.card)).toBe(`24:${134 * 65536 + 62532}`);
  });

  it('lays a Wiegand 26 frame out as even parity, 8-bit facility, 16-bit card, odd parity', () => {
    // facility 1, card 1: data 00000001 0000000000000001; first 12 data bits hold one 1 → even parity 1;
    // last 12 hold one 1 → odd parity 0.
    expect(BADGE_CODECS.wiegand26.encode(65536 + 1)).toBe('1' + '00000001' + '0000000000000001' + '0\r\n');
    expect(BADGE_CODECS.wiegand26.decode('10000000100000000000000010')).toEqual({ ok: true, card: { bits: 24, value: 65537 } });
  });

  it('rejects exactly a frame with one bit of its Wiegand line flipped (parity), or its hex checksum broken', () => {
    for (const format of ['wiegand26', 'wiegand34'] as const) {
      const codec = BADGE_CODECS[format];
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** codec.bits - 1 }), fc.nat(), (value, at) => {
          const bits = strip(codec.encode(value), '\r\n');
          const i = at % bits.length;
          const flipped = bits.slice(0, i) + (bits[i] === '1' ? '0' : '1') + bits.slice(i + 1);
          const v = codec.decode(flipped);
          expect(v.ok).toBe(false);
          expect(v.ok ? null : v.kind).toBe('checksum');
        }),
        { numRuns: 200 },
      );
      expect(codec.decode(strip(codec.encode(5, { badChecksum: true }), '\r\n'))).toMatchObject({ ok: false, kind: 'checksum' });
    }
    const hex = BADGE_CODECS['em4100-hex'];
    expect(hex.decode(strip(hex.encode(77, { badChecksum: true }), String.fromCharCode(ETX)))).toMatchObject({
      ok: false,
      kind: 'checksum',
    });
  });

  it('tells a misread (wrong length or range: ask again) from noise (drop)', () => {
    const dec = BADGE_CODECS['em4100-dec'];
    expect(dec.decode('000884435\r')).toMatchObject({ ok: false, kind: 'format' });
    expect(dec.decode('9999999999')).toMatchObject({ ok: false, kind: 'format' });
    expect(dec.decode('x#\xfe\x00?\r')).toMatchObject({ ok: false, kind: 'noise' });
    expect(dec.decode('hello')).toMatchObject({ ok: false, kind: 'noise' });
    const hex = BADGE_CODECS['em4100-hex'];
    // Noise before the start code is skipped: the frame after the last STX counts.
    expect(hex.decode(`x#\xfe\x00?${strip(hex.encode(42), String.fromCharCode(ETX))}`)).toEqual({
      ok: true,
      card: { bits: 32, value: 42 },
    });
    expect(hex.decode('no start code')).toMatchObject({ ok: false, kind: 'noise' });
    expect(hex.decode(`${String.fromCharCode(STX)}1234`)).toMatchObject({ ok: false, kind: 'format' });
    const w26 = BADGE_CODECS.wiegand26;
    expect(w26.decode('1010')).toMatchObject({ ok: false, kind: 'format' });
    expect(w26.decode('300,5')).toMatchObject({ ok: false, kind: 'format' });
    expect(w26.decode('a,b')).toMatchObject({ ok: false, kind: 'noise' });
  });

  it('keeps the digits of a misread card out of the detail (it is logged)', () => {
    for (const [format, frame] of [
      ['wiegand26', '98765,43210'],
      ['wiegand34', '12,987654'],
      ['em4100-dec', '98765432109'],
      ['em4100-dec', '9876543'],
    ] as const) {
      const v = BADGE_CODECS[format].decode(frame);
      expect(v.ok).toBe(false);
      for (const digits of frame.split(',')) expect(v.ok ? '' : v.detail).not.toContain(digits);
    }
  });

  it('names the formats for an unknown one, and refuses STX frames on a keyboard wedge', () => {
    expect(() => badgeCodec('em4200')).toThrow(
      expect.objectContaining({
        code: 'DRIVER_BAD_ARGUMENT',
        hint: expect.stringContaining('em4100-dec, em4100-hex, wiegand26, wiegand34'),
      }),
    );
    expect(() => badgeCodec('em4100-hex', { keyboard: true })).toThrow(
      expect.objectContaining({ code: 'DRIVER_BAD_ARGUMENT', hint: expect.stringContaining('em4100-dec, wiegand26, wiegand34') }),
    );
    expect(badgeCodec(undefined).name).toBe('em4100-dec');
    expect(() => BADGE_CODECS.wiegand26.encode(2 ** 24)).toThrow(expect.objectContaining({ code: 'DRIVER_BAD_ARGUMENT' }));
  });
});

describe('credentialOf', () => {
  it('is bits and number', () => {
    const card: BadgeCard = { bits: 24, value: 7 };
    expect(credentialOf(card)).toBe('24:7');
  });
});
