import { describe, expect, it } from 'vitest';
import { frameFocus, irisFocus } from '../../../../src/biometrics/extract/iris-focus.js';
import { localizeIris, MIN_FOCUS, shortOf } from '../../../../src/biometrics/extract/iris-segmentation.js';
import type { GrayImage } from '../../../../src/biometrics/image/gray-image.js';
import { renderEye } from '../../../../src/synthetic/eye-image.js';

function reason(img: GrayImage): string {
  try {
    localizeIris(img);
    return 'accepted';
  } catch (err) {
    return (err as { context: { reason: string } }).context.reason;
  }
}

const focusOf = (img: GrayImage) => localizeIris(img, { minFocus: Number.NEGATIVE_INFINITY }).focus;

// The blur refusal used the pupil edge's width: an eye whose pupil margin is soft while its iris
// texture is sharp (MMU1 025L_1) was refused as out of focus. It now reads the iris texture.
describe('the focus of the iris texture', () => {
  it('keeps a sharp eye whose pupil edge is soft, and refuses the same eye out of focus', () => {
    // A pupil edge that ramps over 14 px, 12 % of the iris radius (the old rule refused over 6 %).
    const soft = renderEye(108, 1, { pupilEdge: 14 });
    expect(reason(soft)).toBe('accepted');
    expect(focusOf(soft)).toBeGreaterThan(0.9 * focusOf(renderEye(108, 1)));
    // Out of focus (12 % of the iris radius): refused, and its focus is far under the sharp eye's.
    const blurred = renderEye(34, 1, { blurred: true });
    expect(reason(blurred)).toBe('blurred');
    expect(focusOf(blurred)).toBeLessThan(0.5 * focusOf(renderEye(34, 1)));
  });

  it('the refusal says the figure and what to do', () => {
    try {
      localizeIris(renderEye(34, 1, { blurred: true }));
      expect.unreachable('a blurred eye was accepted');
    } catch (err) {
      const e = err as { message: string; hint: string; context: { focus: number; minFocus: number } };
      expect(e.context.focus).toBeLessThan(e.context.minFocus);
      expect(e.message).toContain(`focus is ${shortOf(e.context.focus, e.context.minFocus)}`);
      expect(e.hint).toMatch(/focus distance/);
    }
  });

  it('a figure just under its floor never reads as equal to it', () => {
    // 0.0439 rounded would read "0.044, it needs at least 0.044".
    expect(shortOf(0.0439, 0.044)).toBe('0.043, it needs at least 0.044');
    expect(shortOf(0.043, 0.044)).toBe('0.043, it needs at least 0.044');
    expect(shortOf(0.0125, 0.04)).toBe('0.012, it needs at least 0.040');
  });

  it('falls as the blur grows, and does not depend on the gain or on the eye’s size in the frame', () => {
    const f = [0.7, 2, 4, 7].map((blur) => focusOf(renderEye(31, 1, { blur })));
    for (let i = 1; i < f.length; i++) expect(f[i]!).toBeLessThan(f[i - 1]!);
    const img = renderEye(31, 1);
    const dim: GrayImage = { ...img, pixels: Uint8Array.from(img.pixels, (v) => Math.round(30 + 0.5 * v)) };
    expect(Math.abs(focusOf(dim) - focusOf(img))).toBeLessThan(0.1 * focusOf(img));
    // The same eye at two thirds of the size (blur scaled with it): about the same focus.
    const small = renderEye(31, 1, { scale: 0.67, blur: 0.47 });
    expect(Math.abs(focusOf(small) - focusOf(img))).toBeLessThan(0.2 * focusOf(img));
  });
});

// Once defocus has taken the texture, the band-pass read the sensor noise: an eye blurred by 16-20 %
// of its iris radius, which matches none of its siblings, stayed over the floor. The noise's share
// of the band is now taken out.
describe('the focus of the iris texture under sensor noise', () => {
  const plane = (img: GrayImage) => ({ f: Float32Array.from(img.pixels), w: img.width, h: img.height });
  const onTruth = (img: ReturnType<typeof renderEye>) => irisFocus(plane(img), img.truth.pupil, img.truth.iris);
  const blurredBy = (eye: number, share: number, noise: number) =>
    renderEye(eye, 1, { noise, blur: share * renderEye(eye, 1).truth.iris.r });

  it('reads a heavily blurred, noisy iris under the floor, and the same iris sharp with the same noise over it', () => {
    for (const eye of [31, 34, 108]) {
      // Noise of 10 gray levels: the band's answer to it alone is over the old floor.
      expect(onTruth(blurredBy(eye, 0.18, 10))).toBeLessThan(MIN_FOCUS);
      expect(onTruth(renderEye(eye, 1, { noise: 10 }))).toBeGreaterThan(2 * MIN_FOCUS);
    }
  });

  it('does not rise with the noise on a texture defocus has taken', () => {
    for (const eye of [31, 34, 108]) {
      const quiet = onTruth(blurredBy(eye, 0.18, 3));
      expect(onTruth(blurredBy(eye, 0.18, 10))).toBeLessThan(1.3 * quiet);
    }
  });

  it('refuses such an eye as out of focus, with the figure and what to do', () => {
    // Blurred by 16 % of its iris radius under noise of 10 gray levels, this eye is still found.
    try {
      localizeIris(blurredBy(31, 0.16, 10));
      expect.unreachable('a blurred eye was accepted');
    } catch (err) {
      const e = err as { message: string; hint: string; context: { reason: string; focus: number; minFocus: number } };
      expect(e.context.reason).toBe('blurred');
      expect(e.context.focus).toBeLessThan(e.context.minFocus);
      expect(e.message).toContain(`the iris texture's focus is ${shortOf(e.context.focus, e.context.minFocus)}`);
      expect(e.hint).toMatch(/focus distance/);
    }
  });
});

// An eye blurred until it can no longer be found came out as closed or off-axis (blur spreads the
// pupil's rim and fades the reflections before it takes the texture), and the person was told to
// open the eye or look at the camera. Where localization fails, the whole frame's focus now speaks.
describe('the focus of the whole frame', () => {
  const refusal = (img: GrayImage, opts = {}) => {
    try {
      localizeIris(img, opts);
      return null;
    } catch (err) {
      return err as {
        message: string;
        hint: string;
        context: { reason: string; frameFocus?: number; minFrameFocus?: number; seenAs?: string };
      };
    }
  };
  const blurredBy = (eye: number, share: number) => renderEye(eye, 1, { blur: share * renderEye(eye, 1).truth.iris.r });

  it('refuses an eye too blurred to be found as out of focus, with the frame’s figure and what to do', () => {
    // Blurred by 12 % of the iris radius, these eyes are not found (as closed, or as off-axis).
    for (const [eye, seenAs] of [
      [6, 'closed'],
      [7, 'closed'],
      [2, 'off-axis'],
    ] as const) {
      const img = blurredBy(eye, 0.12);
      expect(refusal(img, { minFrameFocus: Number.NEGATIVE_INFINITY })?.context.reason).toBe(seenAs);
      const e = refusal(img)!;
      expect(e.context.reason).toBe('blurred');
      expect(e.context.seenAs).toBe(seenAs);
      expect(e.context.frameFocus!).toBeLessThan(e.context.minFrameFocus!);
      expect(e.message).toContain(`the frame's focus is ${shortOf(e.context.frameFocus!, e.context.minFrameFocus!)}`);
      expect(e.hint).toMatch(/focus distance/);
    }
  });

  it('still refuses a sharp closed eye or a dark disc with no iris as closed, and a sharp off-axis gaze as off-axis', () => {
    for (const eye of [1, 2, 6, 7, 10, 12, 34]) {
      expect(refusal(renderEye(eye, 1, { closed: true }))?.context.reason).toBe('closed');
      expect(refusal(renderEye(eye, 1, { offAxis: true }))?.context.reason).toBe('off-axis');
    }
    // No eye: a dark disc on a bright field, nothing round it.
    const disc = new Uint8Array(640 * 480);
    for (let i = 0; i < disc.length; i++) disc[i] = Math.hypot((i % 640) - 320, Math.floor(i / 640) - 240) < 60 ? 30 : 170;
    expect(refusal({ width: 640, height: 480, pixels: disc })?.context.reason).toBe('closed');
  });

  it('falls as the blur grows, and does not depend on the gain or on the frame’s size', () => {
    const plane = (img: GrayImage) => ({ f: Float32Array.from(img.pixels), w: img.width, h: img.height });
    const f = [0.7, 4, 8, 13].map((blur) => frameFocus(plane(renderEye(31, 1, { blur }))));
    for (let i = 1; i < f.length; i++) expect(f[i]!).toBeLessThan(f[i - 1]!);
    const img = renderEye(31, 1, { blur: 8 });
    const dim: GrayImage = { ...img, pixels: Uint8Array.from(img.pixels, (v) => Math.round(30 + 0.5 * v)) };
    expect(Math.abs(frameFocus(plane(dim)) - frameFocus(plane(img)))).toBeLessThan(0.1 * frameFocus(plane(img)));
    // The same eye in a frame half the size, its blur halved with it: about the same focus.
    const small = renderEye(31, 1, { width: 320, height: 240, blur: 4 });
    expect(Math.abs(frameFocus(plane(small)) - frameFocus(plane(img)))).toBeLessThan(0.2 * frameFocus(plane(img)));
  });
});
