/**
 * ULIDs (26 Crockford base-32 characters: 48-bit millisecond time + 80 random bits): ids that sort
 * by creation time and carry no coordination. Monotonic within one process: two ids made in the
 * same millisecond still sort in the order they were made.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): number[] {
  const bytes = randomBytes(16);
  const digits: number[] = [];
  for (let i = 0; i < 16; i++) digits.push(bytes[i]! % 32);
  return digits;
}

/** A new ULID; `now` is injectable for tests. */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    // Same (or earlier) millisecond: increment the random part so the order holds.
    let i = lastRandom.length - 1;
    while (i >= 0 && lastRandom[i] === 31) lastRandom[i--] = 0;
    if (i >= 0) lastRandom[i]!++;
    else lastRandom = freshRandom();
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return encodeTime(lastTime) + lastRandom.map((d) => ALPHABET[d]).join('');
}

/** The creation time encoded in a ULID, in ms since the epoch. */
export function ulidTime(id: string): number {
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + ALPHABET.indexOf(ch);
  return t;
}

/** A ULID as the outbox stores it: 26 Crockford base-32 characters. */
export const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The same ULID for the same `(timeMs, key)` on every run: the time part is `timeMs`, the other
 * 80 bits the first 80 of SHA-256(`key`). An import gives each line such an id, so importing a
 * file again finds what it recorded before and a consumer that drops repeats by id sees one.
 */
export function derivedUlid(timeMs: number, key: string): string {
  const digest = createHash('sha256').update(key, 'utf8').digest();
  let bits = 0n;
  for (let i = 0; i < 10; i++) bits = (bits << 8n) | BigInt(digest[i]!);
  let random = '';
  for (let i = 0; i < 16; i++) {
    random = ALPHABET[Number(bits & 31n)]! + random;
    bits >>= 5n;
  }
  return encodeTime(Math.max(0, Math.min(2 ** 48 - 1, Math.floor(timeMs)))) + random;
}
