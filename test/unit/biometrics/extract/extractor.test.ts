import { afterAll, describe, expect, it } from 'vitest';
import { createImageExtractor, type ImageExtractor } from '../../../../src/biometrics/extract/extractor.js';
import { syntheticFingerImage } from '../../../../src/synthetic/finger-image.js';
import { renderEye } from '../../../../src/synthetic/eye-image.js';
import { decodeFingerTemplate } from '../../../../src/biometrics/finger/iso19794-2.js';
import { decodeIrisTemplate } from '../../../../src/biometrics/iris/iris-code.js';

const open: ImageExtractor[] = [];
afterAll(async () => {
  for (const e of open) await e.close();
});

describe('createImageExtractor', () => {
  const finger = syntheticFingerImage(5, 1);
  const eye = renderEye(5, 1);

  it('extracts both modalities in its worker thread, with the same bytes as in-process', async () => {
    const inWorker = await createImageExtractor();
    const inline = await createImageExtractor({ worker: false });
    open.push(inWorker, inline);
    const [f, i] = await Promise.all([inWorker.extract('finger', finger), inWorker.extract('iris', eye)]);
    expect(f.format).toBe('iso19794-2');
    const t = decodeFingerTemplate(f.data);
    expect(t.minutiae.length).toBeGreaterThan(10);
    expect(f.quality).toBeGreaterThan(0);
    expect(i.format).toBe('iris-code-v1');
    expect(decodeIrisTemplate(i.data).quality).toBe(i.quality);
    // The caller's buffer is untouched (the worker gets a copy).
    expect(finger.pixels.length).toBe(finger.width * finger.height);
    expect(await inline.extract('finger', finger)).toEqual(f);
    expect(await inline.extract('iris', eye)).toEqual(i);
  });

  it('passes refusals back as AgentErrors with their code and reason, and keeps serving', async () => {
    const ex = await createImageExtractor();
    open.push(ex);
    await expect(ex.extract('iris', renderEye(6, 1, { closed: true }))).rejects.toMatchObject({
      code: 'BIOMETRICS_UNUSABLE_CAPTURE',
      context: { reason: 'closed' },
    });
    await expect(ex.extract('finger', { width: 256, height: 288, pixels: new Uint8Array(256 * 288).fill(230) })).rejects.toMatchObject({
      code: 'BIOMETRICS_UNUSABLE_CAPTURE',
    });
    await expect(ex.extract('finger', { width: 10, height: 10, pixels: new Uint8Array(3) })).rejects.toMatchObject({
      code: 'BIOMETRICS_BAD_IMAGE',
    });
    await expect(ex.extract('face' as 'finger', finger)).rejects.toMatchObject({ code: 'BIOMETRICS_BAD_MODALITY' });
    expect((await ex.extract('iris', eye)).format).toBe('iris-code-v1');
    await ex.close();
    await expect(ex.extract('iris', eye)).rejects.toMatchObject({ code: 'BIOMETRICS_EXTRACTOR_CLOSED' });
  });
});
