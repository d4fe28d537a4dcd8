/**
 * Score calibration of the finger matcher: raw score → −10·log10(FMR).
 *
 * Measured on the synthetic impostor set (`tsx test/bench/match-finger.ts --calibrate`): for each
 * FMR level 10^(−s/10) the table holds the raw score that only that fraction of impostor
 * comparisons reach. Between points the mapping is linear; beyond the last measured point it
 * continues with the mean slope of the last 8 segments (the far tail is extrapolated, not measured:
 * one segment alone rests on a handful of impostor scores).
 */
/** Measured on 319,600 impostor comparisons (800 synthetic fingers, seeds 900000000..): raw score
 * at FMR = 10^(−score/10) for score 0, 2, 4, ... 48. */
// prettier-ignore
export const CALIBRATION_RAW: readonly number[] = [
  0, 4.489, 5.483, 6.27, 6.947, 7.57, 8.158, 8.732, 9.284, 9.818, 10.351, 10.856, 11.351, 11.823, 12.3, 12.743, 13.23, 13.747, 14.161,
  14.697, 15.261, 15.574, 16.087, 16.524, 16.944,
];
// prettier-ignore
export const CALIBRATION_SCORE: readonly number[] = [
  0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48,
];

const TAIL_SEGMENTS = 8;

/** Maps a raw matcher score onto ≈ −10·log10(FMR); monotonic, 0 for no match. */
export function calibrateScore(raw: number): number {
  const r = CALIBRATION_RAW;
  const s = CALIBRATION_SCORE;
  if (raw <= r[0]!) return s[0]!;
  const last = r.length - 1;
  for (let i = 1; i <= last; i++) {
    if (raw <= r[i]!) {
      const t = (raw - r[i - 1]!) / (r[i]! - r[i - 1]!);
      return s[i - 1]! + t * (s[i]! - s[i - 1]!);
    }
  }
  const from = Math.max(0, last - TAIL_SEGMENTS);
  const slope = (s[last]! - s[from]!) / (r[last]! - r[from]!);
  return s[last]! + (raw - r[last]!) * slope;
}
