/**
 * The in-memory fingerprint minutiae template shared by the codecs, the matcher, the index, the
 * synthetic generator and the extractor.
 *
 * Conventions (the same as ISO/IEC 19794-2 and ANSI INCITS 378):
 * - `x`, `y` in pixels of the capture image, origin at the top-left corner, `y` growing downward.
 * - `angle` in radians in [0, 2π), measured COUNTER-CLOCKWISE from the positive x axis as the
 *   image is seen on screen (so the direction vector in image coordinates is
 *   `(cos angle, -sin angle)`). A ridge ending points from the ending into the ridge it ends;
 *   a bifurcation points from the fork into the valley between its two branches (the bisector
 *   of the smallest angle between the three rays, as ANSI/NIST describes both).
 * - `quality` 0..100 (0 = not reported).
 * - `resolutionPpcm` is pixels per centimetre, as the records store it (500 dpi ≈ 197 ppcm).
 *
 * Tested in test/unit/biometrics/finger/iso19794-2.test.ts (the records written and read in these
 * conventions) and test/unit/biometrics/finger/matcher.test.ts (angles normalized under rotation).
 */
export type MinutiaType = 'ending' | 'bifurcation' | 'other';

export interface Minutia {
  x: number;
  y: number;
  /** Radians, [0, 2π), ISO direction convention (see the module comment). */
  angle: number;
  type: MinutiaType;
  /** 0..100; 0 = not reported. */
  quality: number;
}

export interface FingerTemplate {
  width: number;
  height: number;
  /** Pixels per centimetre (197 ≈ 500 dpi). */
  resolutionPpcm: number;
  /** Finger (view) quality 0..100. */
  quality: number;
  minutiae: Minutia[];
  /** ISO finger position code (0 unknown, 1 right thumb ... 10 left little); 0 when not known. */
  fingerPosition?: number;
}

/** 500 dpi in pixels per centimetre, the resolution of the synthetic set and most sensors. */
export const DEFAULT_RESOLUTION_PPCM = 197;

const TWO_PI = 2 * Math.PI;

/** Angle wrapped into [0, 2π). */
export function normalizeAngle(a: number): number {
  const r = a % TWO_PI;
  return r < 0 ? r + TWO_PI : r;
}
