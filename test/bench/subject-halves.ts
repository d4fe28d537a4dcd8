/**
 * The split of a real folder's subjects into a `tune` and a `report` half, shared by every
 * benchmark that chooses a parameter on one half and reports the other (bench:real,
 * iris-focus-calibration.ts): one rule, so a parameter is never chosen on a different half from
 * the one it is reported against.
 *
 * Each subject's half is deterministic: the subjects ordered by the CRC-32 of their id (then the
 * id) go alternately to `tune` and `report`. By hash rather than by name, so neither half is all
 * left eyes or all of one session; every image of a subject is in the same half.
 */
import { crc32 } from 'node:zlib';

export type Half = 'tune' | 'report';

export function halvesOf(subjects: Iterable<string>): Map<string, Half> {
  const key = (id: string) => crc32(Buffer.from(id, 'utf8'));
  const sorted = [...new Set(subjects)].sort((a, b) => key(a) - key(b) || (a < b ? -1 : a > b ? 1 : 0));
  return new Map(sorted.map((id, i) => [id, i % 2 === 0 ? 'tune' : 'report']));
}
