// Tests: src/biometrics/extract/iris-pipeline.ts on the frames of a small camera (MMU2-like), beside
// iris-pipeline.test.ts.
import { describe, expect, it } from 'vitest';
import { extractIris } from '../../../../src/biometrics/extract/iris-pipeline.js';
import { compareIrisCodes } from '../../../../src/biometrics/iris/iris-match.js';
import { renderEye } from '../../../../src/synthetic/eye-image.js';

// What MMU2's camera sees (issue 14): a 320×240 frame, a small pupil with a bright reflection
// inside it, a dark iris. The first localizer took the largest dark blob for the pupil and
// refused all such eyes (72 % as off-axis).
const mmu2Like = (eye: number, sample: number, irisLevel = 100) =>
  renderEye(eye, sample, { width: 320, height: 240, pupilRatio: 0.24, irisLevel, reflectionInPupil: true });

describe('iris from a small camera (MMU2-like)', () => {
  it('finds the small pupil around its reflection and the limbus, and refuses none', async () => {
    // A dark iris (gray 75) is a large, dark, round blob round the small pupil: it must not
    // crowd the pupil out of the candidates.
    for (const [eye, level] of [
      [41, 100],
      [42, 100],
      [43, 100],
      [42, 75],
      [45, 75],
    ] as const) {
      const e = mmu2Like(eye, 1, level);
      const { localization: l } = await extractIris(e);
      expect(Math.hypot(l.pupil.x - e.truth.pupil.x, l.pupil.y - e.truth.pupil.y), `eye ${eye}/${level} pupil centre`).toBeLessThan(3);
      expect(Math.abs(l.pupil.r - e.truth.pupil.r), `eye ${eye}/${level} pupil radius`).toBeLessThan(3);
      expect(Math.abs(l.iris.r - e.truth.iris.r), `eye ${eye}/${level} iris radius`).toBeLessThan(5);
    }
  });

  it('matches the same eye and tells two eyes apart', async () => {
    const code = async (eye: number, sample: number) => (await extractIris(mmu2Like(eye, sample))).code;
    const a1 = await code(44, 1),
      a2 = await code(44, 2),
      b = await code(45, 1);
    expect(compareIrisCodes(a1, a2, { shiftRange: 8 }).hd).toBeLessThan(0.32);
    expect(compareIrisCodes(a1, b, { shiftRange: 8 }).hd).toBeGreaterThan(0.35);
  });
});
