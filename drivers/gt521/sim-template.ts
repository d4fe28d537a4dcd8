/**
 * The GT-521 simulator's templates: opaque 498-byte blobs, like the module's, that encode the
 * virtual finger they were made from so Verify, Identify and the duplicate check behave like the
 * module does. Layout (little-endian):
 *
 *   offset  size  field
 *   0       4     magic "GSIM"
 *   4       1     layout version (1)
 *   5       1     capture quality 0..100
 *   6       2     reserved, 0
 *   8       4     virtual finger id (the synthetic seed)
 *   12      4     impression (which capture of that finger)
 *   16      478   filler: seeded by the finger id, a few bytes varied by the impression, so two
 *                 presses of one finger give different but related blobs
 *   494     4     CRC-32 (zlib) of bytes 0..493
 *
 * Two templates match when both are intact, come from the same finger and both have a quality of
 * at least MATCH_MIN_QUALITY. A blob that is not in this layout (a real module's template written
 * with SetTemplate) is stored and returned as it is but matches nothing.
 *
 * Tested in test/unit/drivers/gt521/driver.test.ts and test/unit/drivers/gt521/scanner.test.ts (the
 * simulator's templates verify, identify and come back decoded).
 */
import { crc32 } from 'node:zlib';
import { seededRandom } from '../simulator/images.js';
import { TEMPLATE_SIZE } from './protocol.js';

const MAGIC = Buffer.from('GSIM', 'ascii');
export const MATCH_MIN_QUALITY = 40;

export interface SimTemplateInfo {
  fingerId: number;
  impression: number;
  quality: number;
}

export function encodeSimTemplate(info: SimTemplateInfo): Buffer {
  const buf = Buffer.alloc(TEMPLATE_SIZE);
  MAGIC.copy(buf, 0);
  buf[4] = 1;
  buf[5] = Math.max(0, Math.min(100, Math.round(info.quality)));
  buf.writeUInt32LE(info.fingerId >>> 0, 8);
  buf.writeUInt32LE(info.impression >>> 0, 12);
  const rnd = seededRandom(info.fingerId ^ 0x9e3779b9);
  for (let i = 16; i < 494; i++) buf[i] = Math.floor(rnd() * 256);
  const vary = seededRandom(((info.fingerId * 31) ^ info.impression) >>> 0);
  for (let k = 0; k < 24; k++) buf[16 + Math.floor(vary() * 478)] ^= 1 + Math.floor(vary() * 255);
  buf.writeUInt32LE(crc32(buf.subarray(0, 494)), 494);
  return buf;
}

/** The finger a simulator template comes from, or null for any other blob. */
export function decodeSimTemplate(bytes: Uint8Array): SimTemplateInfo | null {
  if (bytes.length !== TEMPLATE_SIZE) return null;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!buf.subarray(0, 4).equals(MAGIC) || buf[4] !== 1) return null;
  if (buf.readUInt32LE(494) !== crc32(buf.subarray(0, 494))) return null;
  return { fingerId: buf.readUInt32LE(8), impression: buf.readUInt32LE(12), quality: buf[5]! };
}

export function simTemplatesMatch(a: SimTemplateInfo | null, b: SimTemplateInfo | null): boolean {
  return a !== null && b !== null && a.fingerId === b.fingerId && a.quality >= MATCH_MIN_QUALITY && b.quality >= MATCH_MIN_QUALITY;
}
