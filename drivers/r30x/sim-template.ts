/**
 * The R30x simulator's character files: opaque 512-byte blobs, like the module's, that encode the
 * virtual finger they came from so Search, HiSpeedSearch, Match and RegModel behave like a module
 * (the same finger scores high, another finger does not match). Layout (big-endian, like the module):
 *
 *   offset  size  field
 *   0       4     magic "RSIM"
 *   4       1     layout version (1)
 *   5       1     kind: 1 character file from one image, 2 template merged by RegModel
 *   6       2     reserved, 0
 *   8       4     virtual finger id (the synthetic seed)
 *   12      4     impression (which capture of that finger)
 *   16      492   filler seeded by the finger id, a few bytes varied by the impression
 *   508     4     CRC-32 (zlib) of bytes 0..507
 *
 * A blob not in this layout (a real module's template written with DownChar) is kept and
 * returned byte for byte but matches nothing.
 *
 * Tested in test/unit/drivers/r30x/scanner.test.ts (Search, Match, RegModel and UpChar/DownChar on
 * the simulator's character files, through scanner.contract.ts).
 */
import { crc32 } from 'node:zlib';
import { seededRandom } from '../simulator/images.js';
import { CHAR_FILE_BYTES } from './protocol.js';

const MAGIC = Buffer.from('RSIM', 'ascii');

export interface R30xSimTemplate {
  fingerId: number;
  impression: number;
  kind: 1 | 2;
}

export function encodeR30xSimTemplate(t: R30xSimTemplate): Buffer {
  const buf = Buffer.alloc(CHAR_FILE_BYTES);
  MAGIC.copy(buf, 0);
  buf[4] = 1;
  buf[5] = t.kind;
  buf.writeUInt32BE(t.fingerId >>> 0, 8);
  buf.writeUInt32BE(t.impression >>> 0, 12);
  const rnd = seededRandom((t.fingerId ^ 0x5bd1e995) >>> 0);
  for (let i = 16; i < 508; i++) buf[i] = Math.floor(rnd() * 256);
  const vary = seededRandom(((t.fingerId * 31) ^ t.impression ^ (t.kind << 24)) >>> 0);
  for (let k = 0; k < 24; k++) buf[16 + Math.floor(vary() * 492)]! ^= 1 + Math.floor(vary() * 255);
  buf.writeUInt32BE(crc32(buf.subarray(0, 508)), 508);
  return buf;
}

export function decodeR30xSimTemplate(bytes: Uint8Array | undefined): R30xSimTemplate | null {
  if (!bytes || bytes.length !== CHAR_FILE_BYTES) return null;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!buf.subarray(0, 4).equals(MAGIC) || buf[4] !== 1) return null;
  if (buf.readUInt32BE(508) !== crc32(buf.subarray(0, 508))) return null;
  const kind = buf[5];
  if (kind !== 1 && kind !== 2) return null;
  return { fingerId: buf.readUInt32BE(8), impression: buf.readUInt32BE(12), kind };
}

/**
 * The module-style score of two blobs: 0 for different fingers or foreign blobs, 60..199 for the
 * same finger (deterministic in the impressions, higher against a merged template).
 */
export function r30xSimScore(a: Uint8Array | undefined, b: Uint8Array | undefined): number {
  const x = decodeR30xSimTemplate(a);
  const y = decodeR30xSimTemplate(b);
  if (!x || !y || x.fingerId !== y.fingerId) return 0;
  const base = x.kind === 2 || y.kind === 2 ? 100 : 60;
  return base + ((x.impression * 7 + y.impression * 13) % 100);
}

/** The lowest score that counts as a match at a security level 1..5. */
export function r30xSimThreshold(securityLevel: number): number {
  return 20 + securityLevel * 10;
}
