import { describe, expect, it } from 'vitest';
import { localizeIris } from '../../../../src/biometrics/extract/iris-segmentation.js';
import { renderEye, type EyeRenderOptions } from '../../../../src/synthetic/eye-image.js';

function reason(eye: number, opts: EyeRenderOptions): string {
  try {
    localizeIris(renderEye(eye, 1, opts));
    return 'accepted';
  } catch (err) {
    return (err as { context: { reason: string } }).context.reason;
  }
}

// Eyes whose reason used to come out wrong: a reflection or lashes widening the pupil's box let an
// off-axis eye through, and a far eye's small, ragged pupil blob was called off-axis.
describe('iris refusal reasons on hard eyes', () => {
  it('an off-axis gaze whose pupil box is widened by a reflection is still off-axis', () => {
    expect(reason(117, { offAxis: true })).toBe('off-axis');
  });

  it('a far eye is too small, not off-axis, whatever the shape of its small pupil blob', () => {
    for (const eye of [106, 108, 118]) expect(reason(eye, { tooSmall: true })).toBe('too-small');
  });

  it('a blurred eye is blurred, not off-axis', () => {
    expect(reason(108, { blurred: true })).toBe('blurred');
  });
});

// A 640×480 frame is searched on a copy half its size; the pupil is then traced again at full
// resolution with the reflections found on that copy filled in (not searched for again).
describe('the pupil of a large frame traced at full resolution', () => {
  it('lands on the rendered pupil with most of its rays on the outline, its reflections found', () => {
    for (const [eye, sample] of [
      [1, 2],
      [3, 1],
      [6, 2],
    ] as const) {
      const img = renderEye(eye, sample);
      expect(img.width).toBe(640);
      expect(img.truth.reflections.length).toBeGreaterThan(0);
      const loc = localizeIris(img);
      const { pupil } = img.truth;
      expect(Math.hypot(loc.pupil.x - pupil.x, loc.pupil.y - pupil.y)).toBeLessThan(1.5);
      expect(Math.abs(loc.pupil.r - pupil.r)).toBeLessThan(1.5);
      expect(loc.pupilFitted).toBeGreaterThan(0.6);
      expect(loc.reflections.count).toBeGreaterThan(0);
    }
  });
});
