import { afterAll, describe, expect, it } from 'vitest';
import { renderEye } from '../../../../src/biometrics/synthetic/eye-image.js';
import { extractIrisCode, IRIS_MODEL } from '../../../../src/biometrics/extract/iris-encode.js';
import { segmentIris } from '../../../../src/biometrics/extract/iris-segment.js';
import { releaseSessions } from '../../../../src/biometrics/extract/onnx-sessions.js';
import { compareIrisCodes } from '../../../../src/biometrics/iris/iris-match.js';
import { validBitCount } from '../../../../src/biometrics/iris/iris-code.js';
import { IRIS_GABOR } from '../../../../models/build/iris-gabor-encoder.js';

afterAll(() => releaseSessions());

describe('iris extraction', () => {
  it('finds the pupil and the limbus within 4 px of the truth, and the eyelids', () => {
    for (const [eye, sample] of [[11, 1], [12, 2]] as const) {
      const img = renderEye(eye, sample);
      const seg = segmentIris(img);
      const t = img.truth;
      expect(Math.hypot(seg.pupil.x - t.pupil.x, seg.pupil.y - t.pupil.y)).toBeLessThan(4);
      expect(Math.abs(seg.pupil.r - t.pupil.r)).toBeLessThan(4);
      expect(Math.hypot(seg.iris.x - t.iris.x, seg.iris.y - t.iris.y)).toBeLessThan(4);
      expect(Math.abs(seg.iris.r - t.iris.r)).toBeLessThan(4);
      // The upper lid crosses the iris in these samples (opening < 0.95 R): found within 4 px.
      if (t.eyelids.upper.y0 > t.iris.y - t.iris.r + 4) expect(Math.abs(seg.upperLid!.y0 - t.eyelids.upper.y0)).toBeLessThan(4);
      // Lid skin, lashes and reflections are masked.
      expect(seg.valid(t.iris.x, t.eyelids.upper.y0 - 5)).toBe(false);
      for (const r of t.reflections) expect(seg.valid(r.x, r.y)).toBe(false);
    }
  });

  it('two samples of an eye match and two eyes do not (fractional Hamming distance)', async () => {
    const a1 = await extractIrisCode(renderEye(21, 1));
    const a2 = await extractIrisCode(renderEye(21, 2));
    const b1 = await extractIrisCode(renderEye(22, 1));
    expect(validBitCount(a1.code)).toBeGreaterThan(1000);
    expect(a1.quality).toBeGreaterThan(60);
    expect(a1.code.quality).toBe(a1.quality);
    const genuine = compareIrisCodes(a1.code, a2.code);
    const impostor = compareIrisCodes(a1.code, b1.code);
    expect(genuine.hdRaw).toBeLessThan(0.2);
    expect(impostor.hdRaw).toBeGreaterThan(0.33);
  });

  it('refuses closed, off-axis, too small and blurred eyes with the reason', async () => {
    const cases = [['closed', { closed: true }], ['off-axis', { offAxis: true }], ['too small', { tooSmall: true }], ['blurred', { blurred: true }]] as const;
    for (const [reason, opts] of cases) {
      await expect(extractIrisCode(renderEye(31, 1, opts))).rejects.toMatchObject({ code: 'BIOMETRICS_UNUSABLE_CAPTURE', context: { reason } });
    }
  });

  it('refuses a wrongly sized buffer as a bad image', async () => {
    await expect(extractIrisCode({ width: 640, height: 480, pixels: new Uint8Array(10) })).rejects.toMatchObject({ code: 'BIOMETRICS_BAD_IMAGE' });
  });

  it('feeds the strip size the encoder model was built for', () => {
    expect([IRIS_MODEL.rows, IRIS_MODEL.cols]).toEqual([IRIS_GABOR.rows, IRIS_GABOR.cols]);
  });
});
