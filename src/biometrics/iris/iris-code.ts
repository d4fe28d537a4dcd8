/**
 * The iris-code template, version 1: 8 rings × 128 angular positions × 2 phase bits (sign of the
 * real and imaginary part of a 2-D Gabor response) = 2048 code bits, and as many mask bits
 * (1 = the bit is valid; 0 = eyelid, eyelash, reflection or off the iris).
 *
 * Canonical bit index: `i = (angle · 8 + ring) · 2 + k` (k = 0 real, 1 imaginary). Bit i lives in
 * byte `i >> 3`, at bit `i & 7` counted from the least significant bit. One angular position (a
 * "column") is therefore 16 bits = 2 bytes, and rotating the eye by one position shifts the code
 * by exactly 2 bytes; read as little-endian 32-bit words, word w holds columns 2w and 2w + 1.
 *
 * File layout (`encodeIrisTemplate`), all integers big-endian, 528 bytes in all:
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0 | 4 | magic `EAIR` (0x45 0x41 0x49 0x52) |
 * | 4 | 1 | format version = 1 |
 * | 5 | 1 | rings = 8 |
 * | 6 | 2 | angular positions = 128 |
 * | 8 | 1 | bits per sample = 2 |
 * | 9 | 1 | quality 0–100 (255 = not computed) |
 * | 10 | 2 | bytes per plane = 256 |
 * | 12 | 256 | code bits |
 * | 268 | 256 | mask bits |
 * | 524 | 4 | CRC-32 (IEEE, as zlib) of bytes 0–523 |
 */
import { crc32 } from 'node:zlib';
import { AgentError } from '../../core/errors.js';

export const IRIS_RINGS = 8;
export const IRIS_ANGLES = 128;
export const IRIS_BITS_PER_SAMPLE = 2;
/** Bits per angular position (one column). */
export const IRIS_COLUMN_BITS = IRIS_RINGS * IRIS_BITS_PER_SAMPLE;
export const IRIS_CODE_BITS = IRIS_ANGLES * IRIS_COLUMN_BITS;
export const IRIS_CODE_BYTES = IRIS_CODE_BITS / 8;
export const IRIS_MAGIC = Uint8Array.of(0x45, 0x41, 0x49, 0x52);
export const IRIS_FORMAT = 'iris-code-v1';
export const IRIS_HEADER_BYTES = 12;
export const IRIS_TEMPLATE_BYTES = IRIS_HEADER_BYTES + 2 * IRIS_CODE_BYTES + 4;
/** Quality byte value meaning "not computed". */
export const IRIS_QUALITY_UNKNOWN = 255;

export interface IrisCode {
  version: 1;
  rings: 8;
  angles: 128;
  /** 256 bytes of phase bits, canonical order. */
  code: Uint8Array;
  /** 256 bytes, 1 = valid bit. */
  mask: Uint8Array;
  /** 0–100, or 255 when not computed. */
  quality: number;
}

/** Canonical bit index of (ring, angle, k). */
export function irisBitIndex(ring: number, angle: number, k: number): number {
  return (angle * IRIS_RINGS + ring) * IRIS_BITS_PER_SAMPLE + k;
}

export function getBit(plane: Uint8Array, i: number): number {
  return (plane[i >> 3]! >> (i & 7)) & 1;
}

export function setBit(plane: Uint8Array, i: number, value: boolean | number): void {
  if (value) plane[i >> 3]! |= 1 << (i & 7);
  else plane[i >> 3]! &= ~(1 << (i & 7));
}

/**
 * Builds a code from two functions of (ring, angle, k): the phase bit and whether it is valid.
 * This is the extractor's entry point: it never has to know the bit order.
 */
export function createIrisCode(
  bit: (ring: number, angle: number, k: number) => boolean | number,
  valid: (ring: number, angle: number, k: number) => boolean | number = () => true,
  quality: number = IRIS_QUALITY_UNKNOWN,
): IrisCode {
  const code = new Uint8Array(IRIS_CODE_BYTES);
  const mask = new Uint8Array(IRIS_CODE_BYTES);
  for (let angle = 0; angle < IRIS_ANGLES; angle++) {
    for (let ring = 0; ring < IRIS_RINGS; ring++) {
      for (let k = 0; k < IRIS_BITS_PER_SAMPLE; k++) {
        const i = irisBitIndex(ring, angle, k);
        if (valid(ring, angle, k)) setBit(mask, i, 1);
        if (bit(ring, angle, k)) setBit(code, i, 1);
      }
    }
  }
  return { version: 1, rings: 8, angles: 128, code, mask, quality: checkQuality(quality) };
}

function checkQuality(q: number): number {
  if (!Number.isInteger(q) || q < 0 || (q > 100 && q !== IRIS_QUALITY_UNKNOWN)) {
    throw new AgentError('BIOMETRICS_TEMPLATE_INVALID', `iris quality must be an integer 0-100 (or 255 = unknown), got ${q}`, {
      quality: q,
    });
  }
  return q;
}

/** Number of valid bits of a code. */
export function validBitCount(c: IrisCode): number {
  let n = 0;
  for (const b of c.mask) n += POPCOUNT8[b]!;
  return n;
}

const POPCOUNT8 = (() => {
  const t = new Uint8Array(256);
  for (let i = 1; i < 256; i++) t[i] = (i & 1) + t[i >> 1]!;
  return t;
})();

export function encodeIrisTemplate(c: IrisCode): Uint8Array {
  if (c.version !== 1 || c.rings !== IRIS_RINGS || c.angles !== IRIS_ANGLES) {
    throw new AgentError(
      'BIOMETRICS_TEMPLATE_INVALID',
      `only iris codes v1 with 8 rings × 128 angles can be written (got v${c.version}, ${c.rings}×${c.angles})`,
      { version: c.version },
    );
  }
  if (c.code.length !== IRIS_CODE_BYTES || c.mask.length !== IRIS_CODE_BYTES) {
    throw new AgentError(
      'BIOMETRICS_TEMPLATE_INVALID',
      `iris code and mask must be ${IRIS_CODE_BYTES} bytes each (got ${c.code.length} and ${c.mask.length})`,
      {},
    );
  }
  const out = new Uint8Array(IRIS_TEMPLATE_BYTES);
  const dv = new DataView(out.buffer);
  out.set(IRIS_MAGIC, 0);
  out[4] = 1;
  out[5] = IRIS_RINGS;
  dv.setUint16(6, IRIS_ANGLES);
  out[8] = IRIS_BITS_PER_SAMPLE;
  out[9] = checkQuality(c.quality);
  dv.setUint16(10, IRIS_CODE_BYTES);
  out.set(c.code, IRIS_HEADER_BYTES);
  out.set(c.mask, IRIS_HEADER_BYTES + IRIS_CODE_BYTES);
  dv.setUint32(IRIS_TEMPLATE_BYTES - 4, crc32(out.subarray(0, IRIS_TEMPLATE_BYTES - 4)));
  return out;
}

function malformed(offset: number, what: string): AgentError {
  return new AgentError(
    'BIOMETRICS_TEMPLATE_MALFORMED',
    `iris template malformed at byte ${offset}: ${what}`,
    { offset, format: IRIS_FORMAT },
    {
      hint: 'the file is not an iris-code-v1 template or it is damaged: extract or export it again',
    },
  );
}

/** True when the bytes start with the iris template magic (for format sniffing). */
export function isIrisTemplate(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && IRIS_MAGIC.every((b, i) => bytes[i] === b);
}

export function decodeIrisTemplate(bytes: Uint8Array): IrisCode {
  const need = (n: number, what: string) => {
    if (bytes.length < n) throw malformed(bytes.length, `truncated: ${bytes.length} bytes, ${what} needs ${n}`);
  };
  need(4, 'the magic');
  for (let i = 0; i < 4; i++)
    if (bytes[i] !== IRIS_MAGIC[i]) throw malformed(i, `bad magic byte 0x${bytes[i]!.toString(16).padStart(2, '0')} (expected "EAIR")`);
  need(IRIS_HEADER_BYTES, 'the header');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes[4] !== 1) throw malformed(4, `unsupported version ${bytes[4]} (this agent reads version 1)`);
  if (bytes[5] !== IRIS_RINGS) throw malformed(5, `rings ${bytes[5]}, expected ${IRIS_RINGS}`);
  if (dv.getUint16(6) !== IRIS_ANGLES) throw malformed(6, `angular positions ${dv.getUint16(6)}, expected ${IRIS_ANGLES}`);
  if (bytes[8] !== IRIS_BITS_PER_SAMPLE) throw malformed(8, `bits per sample ${bytes[8]}, expected ${IRIS_BITS_PER_SAMPLE}`);
  const quality = bytes[9]!;
  if (quality > 100 && quality !== IRIS_QUALITY_UNKNOWN) throw malformed(9, `quality ${quality} out of range 0-100`);
  if (dv.getUint16(10) !== IRIS_CODE_BYTES) throw malformed(10, `bytes per plane ${dv.getUint16(10)}, expected ${IRIS_CODE_BYTES}`);
  need(IRIS_TEMPLATE_BYTES, 'code, mask and checksum');
  if (bytes.length > IRIS_TEMPLATE_BYTES)
    throw malformed(IRIS_TEMPLATE_BYTES, `${bytes.length - IRIS_TEMPLATE_BYTES} trailing bytes after the checksum`);
  const stored = dv.getUint32(IRIS_TEMPLATE_BYTES - 4);
  const actual = crc32(bytes.subarray(0, IRIS_TEMPLATE_BYTES - 4));
  if (stored !== actual)
    throw malformed(
      IRIS_TEMPLATE_BYTES - 4,
      `checksum 0x${stored.toString(16).padStart(8, '0')} does not match the content (0x${actual.toString(16).padStart(8, '0')})`,
    );
  return {
    version: 1,
    rings: 8,
    angles: 128,
    code: bytes.slice(IRIS_HEADER_BYTES, IRIS_HEADER_BYTES + IRIS_CODE_BYTES),
    mask: bytes.slice(IRIS_HEADER_BYTES + IRIS_CODE_BYTES, IRIS_HEADER_BYTES + 2 * IRIS_CODE_BYTES),
    quality,
  };
}
