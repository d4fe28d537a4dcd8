/**
 * Netpbm graymaps: binary `P5` (8 or 16 bit) and plain `P2` read, binary `P5` 8-bit written.
 * Netpbm has no resolution field; a header comment stating it (`# 500 dpi`, `# resolution: 500
 * dpi`, `# 1000 ppi`) is read, and written when the image has one.
 *
 * Tested in test/unit/biometrics/image/decode-image.test.ts (P5 and P2 written and read back, the
 * resolution comment, truncated data refused).
 */
import { AgentError } from '../../core/errors.js';
import { assertGrayImage, type GrayImage } from './gray-image.js';

function bad(message: string, context: Record<string, unknown> = {}): AgentError {
  return new AgentError('BIOMETRICS_BAD_IMAGE', `PGM: ${message}`, context, { hint: 'pass a valid PGM (P5 or P2) or PNG grayscale image' });
}

export function isPgm(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x50 && (bytes[1] === 0x35 || bytes[1] === 0x32);
}

export function readPgm(bytes: Uint8Array): GrayImage {
  if (!isPgm(bytes)) throw bad('not a PGM file (no P5/P2 magic)');
  const plain = bytes[1] === 0x32;
  let pos = 2;
  const fields: number[] = [];
  let dpi: number | undefined;
  // Header: width, height, maxval; whitespace and # comments in between.
  while (fields.length < 3) {
    while (pos < bytes.length) {
      const c = bytes[pos]!;
      if (c === 0x23) {
        const start = pos;
        while (pos < bytes.length && bytes[pos] !== 0x0a) pos++;
        dpi ??= commentDpi(Buffer.from(bytes.subarray(start + 1, pos)).toString('latin1'));
      } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) pos++;
      else break;
    }
    let n = '';
    while (pos < bytes.length && bytes[pos]! >= 0x30 && bytes[pos]! <= 0x39) n += String.fromCharCode(bytes[pos++]!);
    if (n === '') throw bad('truncated or malformed header');
    fields.push(Number(n));
  }
  const [width, height, maxval] = fields as [number, number, number];
  if (width <= 0 || height <= 0 || width * height > 64e6) throw bad(`invalid size ${width}×${height}`, { width, height });
  if (maxval <= 0 || maxval > 65535) throw bad(`invalid maxval ${maxval}`, { maxval });
  const pixels = new Uint8Array(width * height);
  const scale = 255 / maxval;
  if (plain) {
    let i = 0;
    const text = Buffer.from(bytes.subarray(pos))
      .toString('latin1')
      .replace(/#[^\n]*/g, ' ');
    for (const tok of text.split(/\s+/)) {
      if (tok === '') continue;
      if (i >= pixels.length) break;
      pixels[i++] = Math.round(Math.min(maxval, Number(tok)) * scale);
    }
    if (i < pixels.length) throw bad(`pixel data truncated: ${i} of ${pixels.length} values`);
    return dpi === undefined ? { width, height, pixels } : { width, height, pixels, dpi };
  }
  pos++; // the single whitespace after maxval
  const bpp = maxval < 256 ? 1 : 2;
  if (bytes.length - pos < width * height * bpp)
    throw bad(`pixel data truncated: ${bytes.length - pos} of ${width * height * bpp} bytes`, { width, height });
  for (let i = 0; i < pixels.length; i++) {
    const v = bpp === 1 ? bytes[pos + i]! : (bytes[pos + 2 * i]! << 8) | bytes[pos + 2 * i + 1]!;
    pixels[i] = maxval === 255 ? v : Math.round(Math.min(v, maxval) * scale);
  }
  return dpi === undefined ? { width, height, pixels } : { width, height, pixels, dpi };
}

/** A resolution stated in a header comment: a number followed by dpi or ppi. */
function commentDpi(comment: string): number | undefined {
  const m = /(\d+(?:\.\d+)?)\s*(?:dpi|ppi)\b/i.exec(comment);
  const v = m ? Number(m[1]) : NaN;
  return v > 0 ? v : undefined;
}

export function writePgm(img: GrayImage): Uint8Array {
  assertGrayImage(img);
  const header = Buffer.from(`P5\n${img.dpi ? `# resolution ${img.dpi} dpi\n` : ''}${img.width} ${img.height}\n255\n`, 'latin1');
  const out = new Uint8Array(header.length + img.pixels.length);
  out.set(header, 0);
  out.set(img.pixels, header.length);
  return out;
}
