import { describe, expect, it } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import { extractFinger, fingerResolution } from '../../../../src/biometrics/extract/finger-pipeline.js';
import { resize } from '../../../../src/biometrics/image/resample.js';
import { compareFingerTemplates } from '../../../../src/biometrics/finger/matcher.js';
import { decodeFingerTemplate, encodeIso19794_2 } from '../../../../src/biometrics/finger/iso19794-2.js';
import { pack4bit, unpack4bit } from '../../../../src/biometrics/image/four-bit.js';
import { syntheticFingerImage } from '../../../../src/synthetic/finger-image.js';
import type { Minutia } from '../../../../src/biometrics/finger/template.js';

function matched(truth: Minutia[], found: Minutia[]): number {
  const used = new Set<number>();
  let n = 0;
  for (const g of truth) {
    const j = found.findIndex(
      (m, k) =>
        !used.has(k) &&
        Math.hypot(m.x - g.x, m.y - g.y) <= 10 &&
        Math.abs(Math.atan2(Math.sin(m.angle - g.angle), Math.cos(m.angle - g.angle))) <= Math.PI / 6,
    );
    if (j >= 0) {
      used.add(j);
      n++;
    }
  }
  return n;
}

describe('fingerprint pipeline', () => {
  it('finds the ground-truth minutiae of synthetic images with their ISO directions', async () => {
    let tp = 0,
      truthN = 0,
      foundN = 0;
    for (const f of [11, 12]) {
      const im = syntheticFingerImage(f, 1);
      const { template } = await extractFinger(im);
      const inner = im.minutiae.filter(
        (g) =>
          g.x >= 20 &&
          g.y >= 20 &&
          g.x < im.width - 20 &&
          g.y < im.height - 20 &&
          im.contact[Math.round(g.y + 14) * im.width + Math.round(g.x)] &&
          im.contact[Math.round(g.y - 14) * im.width + Math.round(g.x)] &&
          im.contact[Math.round(g.y) * im.width + Math.round(g.x + 14)] &&
          im.contact[Math.round(g.y) * im.width + Math.round(g.x - 14)],
      );
      tp += matched(inner, template.minutiae);
      truthN += inner.length;
      foundN += template.minutiae.length;
      expect(template.resolutionPpcm).toBe(197);
      for (const m of template.minutiae) expect(m.quality).toBeGreaterThan(0);
    }
    expect(tp / truthN).toBeGreaterThan(0.8);
    expect(tp / foundN).toBeGreaterThan(0.75);
  });

  it('two impressions of a finger match, two fingers do not, through ISO 19794-2 bytes', async () => {
    const a1 = (await extractFinger(syntheticFingerImage(21, 1))).template;
    const a2 = (await extractFinger(syntheticFingerImage(21, 2))).template;
    const b1 = (await extractFinger(syntheticFingerImage(22, 1))).template;
    const rt = (t: typeof a1) => decodeFingerTemplate(encodeIso19794_2(t));
    const genuine = compareFingerTemplates(rt(a1), rt(a2));
    const impostor = compareFingerTemplates(rt(a1), rt(b1));
    expect(genuine).toBeGreaterThan(30);
    expect(impostor).toBeLessThan(genuine - 15);
  });

  it('takes a 4-bit R30x image and a GT-521 raw 160×120 image', async () => {
    const im = syntheticFingerImage(13, 1, 256, 288);
    const four = unpack4bit(pack4bit(im), 256, 288);
    const full = (await extractFinger(im)).template;
    const reduced = (await extractFinger(four)).template;
    expect(matched(full.minutiae, reduced.minutiae)).toBeGreaterThan(full.minutiae.length * 0.6);
    const small = syntheticFingerImage(14, 1, 160, 120);
    const t = (await extractFinger(small)).template;
    expect(t.width).toBe(160);
    expect(t.minutiae.length).toBeGreaterThan(3);
    // A 450 dpi capture is resampled to 500 dpi.
    expect((await extractFinger(small, { dpi: 450 })).template.width).toBe(178);
  });

  it('reads an image at its stated resolution: a 1000 dpi capture matches the 500 dpi one, read at an assumed 500 it does not', async () => {
    const im = syntheticFingerImage(15, 1);
    const at500 = await extractFinger(im);
    expect([at500.dpi, at500.dpiSource]).toEqual([500, 'assumed']);
    const big = { ...resize(im, im.width * 2, im.height * 2), dpi: 1000 };
    const stated = await extractFinger(big);
    expect([stated.dpi, stated.dpiSource]).toEqual([1000, 'image']);
    expect(stated.template.width).toBe(im.width);
    const assumed = await extractFinger({ width: big.width, height: big.height, pixels: big.pixels });
    expect(assumed.dpiSource).toBe('assumed');
    const right = compareFingerTemplates(at500.template, stated.template);
    expect(right).toBeGreaterThan(40);
    expect(compareFingerTemplates(at500.template, assumed.template)).toBeLessThan(right / 2);
    // The resolution given (the scanner's) wins over the image's; a screen default is not a scanner's.
    expect((await extractFinger(big, { dpi: 500 })).dpiSource).toBe('given');
    expect(fingerResolution(undefined, 72)).toEqual({ dpi: 500, source: 'assumed', ignored: 72 });
    expect(fingerResolution(0, 569)).toEqual({ dpi: 569, source: 'image' });
  });

  it('refuses an empty sensor with BIOMETRICS_UNUSABLE_CAPTURE', async () => {
    const blank = { width: 256, height: 288, pixels: new Uint8Array(256 * 288).fill(230) };
    const err = await extractFinger(blank).catch((e: unknown) => e);
    expect(isAgentError(err, 'BIOMETRICS_UNUSABLE_CAPTURE')).toBe(true);
    expect((err as { context: { reason: string } }).context.reason).toBe('no-finger');
  });

  it('refuses pure noise (no ridge pattern) instead of inventing minutiae', async () => {
    let s = 12345;
    const noise = {
      width: 256,
      height: 288,
      pixels: new Uint8Array(256 * 288).map(() => {
        s = (s * 1103515245 + 12345) >>> 0;
        return s >>> 24;
      }),
    };
    const err = await extractFinger(noise).catch((e: unknown) => e);
    expect(isAgentError(err, 'BIOMETRICS_UNUSABLE_CAPTURE')).toBe(true);
    expect((err as { context: { reason: string } }).context.reason).toBe('no-ridges');
  });
});
