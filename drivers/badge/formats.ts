/**
 * The line formats badge readers send, one codec each, shared by the readers (serial and
 * keyboard wedge) and their simulators. A reader sends one frame per card read; the frame ends
 * with the format's delimiter, which the readers split on with `@serialport/parser-readline`.
 *
 *   em4100-dec  10 decimal digits, CR LF: the 32-bit number of a 125 kHz EM4100 card (the
 *               number printed on most cards, e.g. "0008844356"). No checksum. The default,
 *               and what most USB readers (serial or keyboard) send.
 *   em4100-hex  STX (0x02), 10 hex digits (the card's 5 bytes: customer code, then the 32-bit
 *               number), 2 hex digits of checksum (XOR of the 5 bytes), ETX (0x03): RDM6300-style
 *               UART modules at 9600 baud, which repeat the frame every ~50 ms while the card
 *               stays in the field. The checksum is checked; the customer code is dropped so the
 *               card reads the same as on a decimal reader. Serial only (a keyboard types no STX).
 *   wiegand26   Wiegand-to-UART converters: 26 characters '0'/'1' (even parity over bits 1-12,
 *               8-bit facility, 16-bit card, odd parity over bits 13-24; both parities checked),
 *               or "facility,card" in decimal (0-255, 0-65535; no check), CR LF.
 *   wiegand34   the same with 34 bits (16-bit facility, 16-bit card, parities over 1-16 and
 *               17-32), or "facility,card" (0-65535, 0-65535), CR LF.
 *
 * A read becomes a credential `<bits>:<number>`: EM4100 (decimal or hex) and Wiegand 34 carry 32
 * bits (facility × 65536 + card for Wiegand), Wiegand 26 carries 24. The same EM4100 card gives
 * the same credential on a decimal, a hex or a Wiegand-34 reader; a Wiegand-26 reader sees only
 * its low 24 bits, so a site enrols and reads its badges on readers of the same width.
 *
 * A verdict's `detail` is logged: it never holds the card's digits.
 *
 * Decoding tells three outcomes apart: a card; a frame that is a card read gone wrong (bad
 * checksum or parity, wrong length or range: the person is asked to present the card again);
 * and noise (nothing shaped like this format: dropped, counted).
 */
import { AgentError } from '../../src/core/errors.js';

export const BADGE_FORMATS = ['em4100-dec', 'em4100-hex', 'wiegand26', 'wiegand34'] as const;
export type BadgeFormat = (typeof BADGE_FORMATS)[number];
export const DEFAULT_BADGE_FORMAT: BadgeFormat = 'em4100-dec';

/** The longest frame a reader sends (a Wiegand-34 bit line with CR LF is 36): more is noise. */
export const MAX_FRAME_BYTES = 64;

export const STX = 0x02;
export const ETX = 0x03;
const CRLF = '\r\n';

/** A card as a reader of some width delivers it. */
export interface BadgeCard {
  bits: 24 | 32;
  /** 0 .. 2^bits - 1 */
  value: number;
}

export type FrameVerdict =
  | { ok: true; card: BadgeCard }
  | { ok: false; kind: 'checksum' | 'format'; detail: string }
  | { ok: false; kind: 'noise'; detail: string };

export interface EncodeOptions {
  /** Break the checksum or a parity bit (formats that carry one). */
  badChecksum?: boolean;
  /** Wiegand: the bit line (default) or "facility,card". */
  style?: 'bits' | 'pair';
  /** em4100-hex: the card's customer code byte (default 0x12). */
  customer?: number;
}

export interface BadgeFormatCodec {
  readonly name: BadgeFormat;
  /** What ends a frame (the ReadlineParser delimiter). */
  readonly delimiter: string;
  /** Whether a keyboard wedge can type it. */
  readonly typeable: boolean;
  /** Whether a frame carries a checksum or parity that catches a misread. */
  readonly checked: boolean;
  /** The number of bits of the cards this format carries. */
  readonly bits: 24 | 32;
  /** The frame for `card` (delimiter included), as latin1 text. */
  encode(value: number, options?: EncodeOptions): string;
  /** Judges one frame (delimiter removed; bytes as latin1 text). */
  decode(frame: string): FrameVerdict;
}

const PRINTABLE = /^[\x20-\x7e]*$/;

function noise(detail: string): FrameVerdict {
  return { ok: false, kind: 'noise', detail };
}

function misread(kind: 'checksum' | 'format', detail: string): FrameVerdict {
  return { ok: false, kind, detail };
}

function checkValue(value: number, bits: 24 | 32): void {
  if (!Number.isSafeInteger(value) || value < 0 || value >= 2 ** bits) {
    throw new AgentError(
      'DRIVER_BAD_ARGUMENT',
      `card number ${value} does not fit ${bits} bits`,
      { value, bits },
      { hint: `a card number is 0..${2 ** bits - 1}` },
    );
  }
}

/** A line without its trailing CR (the delimiter is LF). */
function line(frame: string): string {
  return frame.endsWith('\r') ? frame.slice(0, -1) : frame;
}

const em4100Dec: BadgeFormatCodec = {
  name: 'em4100-dec',
  delimiter: '\n',
  typeable: true,
  checked: false,
  bits: 32,
  encode(value) {
    checkValue(value, 32);
    return `${String(value).padStart(10, '0')}${CRLF}`;
  },
  decode(frame) {
    const text = line(frame).trim();
    if (!PRINTABLE.test(text) || !/^\d+$/.test(text)) return noise('not a line of digits');
    if (text.length !== 10) return misread('format', `${text.length} digits; an EM4100 line has 10`);
    const value = Number(text);
    if (value > 0xffffffff) return misread('format', 'more than 32 bits');
    return { ok: true, card: { bits: 32, value } };
  },
};

function xor(bytes: number[]): number {
  return bytes.reduce((a, b) => a ^ b, 0);
}

const HEX2 = (n: number) => n.toString(16).toUpperCase().padStart(2, '0');

const em4100Hex: BadgeFormatCodec = {
  name: 'em4100-hex',
  delimiter: String.fromCharCode(ETX),
  typeable: false,
  checked: true,
  bits: 32,
  encode(value, options = {}) {
    checkValue(value, 32);
    const bytes = [(options.customer ?? 0x12) & 0xff, (value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
    let sum = xor(bytes);
    if (options.badChecksum) sum ^= 0x5a;
    return `${String.fromCharCode(STX)}${bytes.map(HEX2).join('')}${HEX2(sum)}${String.fromCharCode(ETX)}`;
  },
  decode(frame) {
    // Resynchronise on the last start code: whatever came before it is noise.
    const start = frame.lastIndexOf(String.fromCharCode(STX));
    if (start < 0) return noise('no STX before ETX');
    const body = frame.slice(start + 1).replace(/\r?\n$/, '');
    if (!/^[0-9A-Fa-f]*$/.test(body)) return misread('format', 'a frame of other characters than hex digits');
    if (body.length !== 12) return misread('format', `${body.length} hex digits; a frame has 12 (5 bytes and the checksum)`);
    const bytes = Array.from({ length: 6 }, (_, i) => parseInt(body.slice(2 * i, 2 * i + 2), 16));
    if (xor(bytes.slice(0, 5)) !== bytes[5]) return misread('checksum', 'the XOR checksum does not match');
    const value = ((bytes[1]! << 24) | (bytes[2]! << 16) | (bytes[3]! << 8) | bytes[4]!) >>> 0;
    return { ok: true, card: { bits: 32, value } };
  },
};

/** Wiegand: `total` bits = even parity, `total - 2` data bits (facility then card), odd parity. */
function wiegand(name: 'wiegand26' | 'wiegand34', total: 26 | 34): BadgeFormatCodec {
  const dataBits = total - 2;
  const half = dataBits / 2;
  const facilityBits = dataBits - 16;
  const bits = dataBits as 24 | 32;
  const ones = (s: string) => [...s].filter((c) => c === '1').length;
  return {
    name,
    delimiter: '\n',
    typeable: true,
    checked: true,
    bits,
    encode(value, options = {}) {
      checkValue(value, bits);
      if (options.style === 'pair') return `${Math.floor(value / 65536)},${value % 65536}${CRLF}`;
      const data = value.toString(2).padStart(dataBits, '0');
      let even = ones(data.slice(0, half)) % 2 === 1 ? '1' : '0';
      const odd = ones(data.slice(half)) % 2 === 0 ? '1' : '0';
      if (options.badChecksum) even = even === '1' ? '0' : '1';
      return `${even}${data}${odd}${CRLF}`;
    },
    decode(frame) {
      const text = line(frame).trim();
      if (!PRINTABLE.test(text)) return noise('unprintable bytes');
      if (/^[01]+$/.test(text)) {
        if (text.length !== total) return misread('format', `${text.length} bits; ${name} has ${total}`);
        const data = text.slice(1, -1);
        if (ones(text.slice(0, half + 1)) % 2 !== 0) return misread('checksum', `the even parity over bits 1-${half} does not hold`);
        if (ones(text.slice(half + 1)) % 2 !== 1)
          return misread('checksum', `the odd parity over bits ${half + 1}-${dataBits} does not hold`);
        return { ok: true, card: { bits, value: parseInt(data, 2) } };
      }
      const pair = /^(\d{1,5}),(\d{1,5})$/.exec(text);
      if (!pair) return noise(`neither ${total} bits nor facility,card`);
      const facility = Number(pair[1]);
      const card = Number(pair[2]);
      // The numbers stay out of the detail: it is logged, and a card number is never logged.
      if (facility >= 2 ** facilityBits || card > 0xffff)
        return misread('format', `facility or card out of range (facility < ${2 ** facilityBits}, card < 65536)`);
      return { ok: true, card: { bits, value: facility * 65536 + card } };
    },
  };
}

export const BADGE_CODECS: Readonly<Record<BadgeFormat, BadgeFormatCodec>> = {
  'em4100-dec': em4100Dec,
  'em4100-hex': em4100Hex,
  wiegand26: wiegand('wiegand26', 26),
  wiegand34: wiegand('wiegand34', 34),
};

export function isBadgeFormat(name: string): name is BadgeFormat {
  return (BADGE_FORMATS as readonly string[]).includes(name);
}

/** The codec of `name` (default em4100-dec), or DRIVER_BAD_ARGUMENT naming the formats; `keyboard` refuses what cannot be typed. */
export function badgeCodec(name: string | undefined, options: { keyboard?: boolean } = {}): BadgeFormatCodec {
  const format = name ?? DEFAULT_BADGE_FORMAT;
  if (!isBadgeFormat(format)) {
    throw new AgentError(
      'DRIVER_BAD_ARGUMENT',
      `unknown badge line format "${format}"`,
      { format },
      { hint: `use ${BADGE_FORMATS.join(', ')} (docs/hardware.md, Badge readers)` },
    );
  }
  const codec = BADGE_CODECS[format];
  if (options.keyboard && !codec.typeable) {
    throw new AgentError(
      'DRIVER_BAD_ARGUMENT',
      `a keyboard-wedge reader cannot send ${format} (its frames start with STX)`,
      { format },
      {
        hint: `use ${BADGE_FORMATS.filter((f) => BADGE_CODECS[f].typeable).join(', ')} for a keyboard-wedge reader, or read the card on a serial reader`,
      },
    );
  }
  return codec;
}

/** The credential of a card: `<bits>:<number>` (never logged). */
export function credentialOf(card: BadgeCard): string {
  return `${card.bits}:${card.value}`;
}
