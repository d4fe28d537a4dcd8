/**
 * Geometry shared by the iris pipeline and the synthetic eye renderer: circles and the
 * pupil-centred rubber sheet (Daugman), where ρ = 0 is the pupil edge and ρ = 1 the limbus.
 *
 * Tested in test/unit/biometrics/extract/iris-pipeline.test.ts (pupil and limbus within a few
 * pixels of the truth) and test/unit/synthetic/eye-image.test.ts (the renderer's eyes).
 */
export interface Circle {
  x: number;
  y: number;
  r: number;
}

/**
 * Where a ray from the pupil centre in direction θ meets the limbus circle: the distance from the
 * pupil centre (the pupil need not be concentric with the iris).
 */
export function limbusDistance(pupil: { x: number; y: number }, iris: Circle, theta: number): number {
  const ux = Math.cos(theta),
    uy = Math.sin(theta);
  const wx = pupil.x - iris.x,
    wy = pupil.y - iris.y;
  const b = ux * wx + uy * wy;
  const c = wx * wx + wy * wy - iris.r * iris.r;
  return -b + Math.sqrt(Math.max(0, b * b - c));
}

/** Image point of rubber-sheet coordinates (ρ, θ). */
export function rubberSheetPoint(pupil: Circle, iris: Circle, rho: number, theta: number): [number, number] {
  const lim = limbusDistance(pupil, iris, theta);
  const d = pupil.r + rho * (lim - pupil.r);
  return [pupil.x + d * Math.cos(theta), pupil.y + d * Math.sin(theta)];
}
