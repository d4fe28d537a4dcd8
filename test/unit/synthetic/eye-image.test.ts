import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hypot, renderEye } from '../../../src/synthetic/eye-image.js';

/** The first 16 hex digits of the SHA-256 of an image's pixels. */
function digest(img: { pixels: Uint8Array }): string {
  return createHash('sha256').update(img.pixels).digest('hex').slice(0, 16);
}

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

  // The pictures the simulators, tests and benchmarks have always been given: a speed-up of the
  // renderer must not change a pixel. Eye 7 is drawn first with its texture made, then again after
  // 40 other eyes (more than the textures kept), and eye 9001 once made and once kept.
  it('draws the same pixels as ever, whichever eyes were drawn before', () => {
    const seen = () => [
      digest(renderEye(7, 1)),
      digest(renderEye(9001, 3, { width: 640, height: 480 })),
      digest(renderEye(9001, 3, { width: 640, height: 480 })),
      digest(renderEye(12, 2, { offAxis: true, pupilEdge: 5 })),
      digest(renderEye(5, 4, { closed: true, width: 320, height: 240 })),
    ];
    const expected = ['237cf4bc86eb414c', 'f1cc3446ae595b22', 'f1cc3446ae595b22', 'bb9086ba838da6bc', '2e709a330392340e'];
    expect(seen()).toEqual(expected);
    for (let eye = 100; eye < 140; eye++) renderEye(eye, 1, { width: 64, height: 48 });
    expect(seen()).toEqual(expected);
  });

  it('measures distances as Math.hypot does, to the last bit', () => {
    fc.assert(
      fc.property(fc.double(), fc.double(), (a, b) => {
        expect(Object.is(hypot(a, b), Math.hypot(a, b))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
    // The renderer's own range: pixel offsets from a centre with a fractional part.
    for (let y = -240.3; y < 240; y += 1.7) for (let x = -320.6; x < 320; x += 0.9) expect(hypot(x, y) === Math.hypot(x, y)).toBe(true);
  });
});
