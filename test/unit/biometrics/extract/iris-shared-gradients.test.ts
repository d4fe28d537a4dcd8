/**
 * Tests: src/biometrics/extract/iris-limbus.ts and src/biometrics/extract/iris-pupil.ts given the
 * gradients the localisation computes once per image.
 */
import { describe, expect, it } from 'vitest';
import { findLimbus, limbusEdges } from '../../../../src/biometrics/extract/iris-limbus.js';
import { houghDarkCircles, houghSigma, type Plane } from '../../../../src/biometrics/extract/iris-pupil.js';
import { gaussianBlur, gaussianBoxRadius, sobel } from '../../../../src/biometrics/image/filters.js';
import { renderEye } from '../../../../src/synthetic/eye-image.js';

// The localisation computes one image's blur and Sobel gradients once and hands them to the Hough
// transform and to every limbus search on it: the same circles as each computing its own.
describe('gradients computed once per image', () => {
  const img = renderEye(3, 1, { width: 320, height: 240 });
  const plane: Plane = { f: Float32Array.from(img.pixels), w: img.width, h: img.height };
  const blurred: Plane = { f: gaussianBlur(plane.f, plane.w, plane.h, 1), w: plane.w, h: plane.h };

  it('the Hough transform finds the same circles from gradients it is given', () => {
    expect(gaussianBoxRadius(houghSigma(plane))).toBe(gaussianBoxRadius(1));
    const own = houghDarkCircles(plane, 3, 96, 24);
    expect(own.length).toBeGreaterThan(0);
    expect(houghDarkCircles(plane, 3, 96, 24, sobel(blurred.f, blurred.w, blurred.h))).toEqual(own);
  });

  it('the limbus search finds the same limbus from the edges it is given', () => {
    const edges = limbusEdges(blurred);
    for (const pupil of houghDarkCircles(plane, 3, 96, 3)) {
      const own = findLimbus(blurred, pupil);
      expect(findLimbus(blurred, pupil, {}, edges)).toEqual(own);
    }
    expect(edges.strong).toBeGreaterThan(0);
    expect(edges.strong).toBeLessThan(edges.max);
  });
});
