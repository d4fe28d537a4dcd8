import { describe, expect, it } from 'vitest';
import { renderEye } from '../../../src/synthetic/eye-image.js';

describe('synthetic eye image', () => {
  it('is reproducible and draws a dark pupil inside a mid-gray iris', () => {
    const a = renderEye(7, 1);
    const b = renderEye(7, 1);
    expect(a.pixels).toEqual(b.pixels);
    expect([a.width, a.height, a.pixels.length]).toEqual([640, 480, 640 * 480]);
    const { pupil, iris } = a.truth;
    expect(pupil.r).toBeLessThan(iris.r * 0.6);
    const at = (x: number, y: number) => a.pixels[Math.round(y) * a.width + Math.round(x)]!;
    // Pupil centre is dark unless a reflection sits there; check a ring of points inside the pupil.
    let dark = 0;
    for (let k = 0; k < 12; k++) {
      const t = (k / 12) * 2 * Math.PI;
      if (at(pupil.x + 0.5 * pupil.r * Math.cos(t), pupil.y + 0.5 * pupil.r * Math.sin(t)) < 60) dark++;
    }
    expect(dark).toBeGreaterThanOrEqual(8);
    // Sclera left and right of the iris is brighter than the iris.
    expect(at(iris.x - iris.r * 1.3, iris.y)).toBeGreaterThan(at(iris.x - iris.r * 0.8, iris.y));
  });

  it('another sample of the same eye moves it; the refusal options change the picture', () => {
    const a = renderEye(7, 1);
    const c = renderEye(7, 2);
    expect(c.truth.iris.x).not.toBe(a.truth.iris.x);
    expect(renderEye(7, 1, { offAxis: true }).truth.aspect).toBeLessThan(1);
    expect(renderEye(7, 1, { tooSmall: true }).truth.iris.r).toBeLessThan(a.truth.iris.r / 2);
  });
});
