/**
 * 1:1 iris comparison: fractional Hamming distance over the jointly valid bits, the minimum over
 * column shifts of ±`shiftRange` angular positions and ring offsets of ±`RADIAL_SHIFT` (an offset
 * taken only when it gains more than `RADIAL_SHIFT_COST`), normalized for the number of bits compared
 * (see `normalizeHd` in iris-scan.ts). 0 = identical, about 0.45–0.5 for different eyes.
 */
import type { IrisCode } from './iris-code.js';
import { CODE_WORDS, codeWords, exactScore, prepareProbe, type ExactScore } from './iris-scan.js';

export const DEFAULT_IRIS_SHIFT_RANGE = 8;

export interface IrisCompareOptions {
  /** Angular positions tried on each side (default 8, i.e. ±22.5°). */
  shiftRange?: number;
}

export function compareIrisCodes(probe: IrisCode, gallery: IrisCode, options: IrisCompareOptions = {}): ExactScore {
  const range = checkShiftRange(options.shiftRange ?? DEFAULT_IRIS_SHIFT_RANGE);
  const g = new Int32Array(CODE_WORDS);
  codeWords(gallery, g, 0);
  return exactScore(g, 0, prepareProbe(probe, range));
}

export function checkShiftRange(range: number): number {
  if (!Number.isInteger(range) || range < 0 || range > 63) throw new RangeError(`iris shift range must be an integer 0-63, got ${range}`);
  return range;
}
