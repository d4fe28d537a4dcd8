import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../../../src/biometrics/image/decode-image.js';
import { readPgm, writePgm } from '../../../../src/biometrics/image/pgm.js';
import { pngDpi, writePng } from '../../../../src/biometrics/image/png.js';
import { pack4bit, unpack4bit } from '../../../../src/biometrics/image/four-bit.js';
import { resampleToDpi, resize } from '../../../../src/biometrics/image/resample.js';
import { gaussianBlur } from '../../../../src/biometrics/image/filters.js';
import { SeededRandom, mixSeed } from '../../../../src/biometrics/image/seeded-random.js';
import type { GrayImage } from '../../../../src/biometrics/image/gray-image.js';

function ramp(width: number, height: number): GrayImage {
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 256;
  return { width, height, pixels };
}

describe('image files', () => {
  it('PGM P5 and PNG round-trip through decodeImage', () => {
    const img = ramp(13, 7);
    expect(decodeImage(writePgm(img))).toEqual(img);
    expect(decodeImage(writePng(img))).toEqual(img);
  });

  it('keeps the resolution: PNG pHYs and a PGM header comment, written and read back', () => {
    const img = { ...ramp(13, 7), dpi: 1000 };
    expect(decodeImage(writePng(img))).toEqual(img);
    expect(decodeImage(writePgm(img))).toEqual(img);
    expect(pngDpi(writePng(ramp(4, 4)))).toBeUndefined();
    expect(decodeImage(writePng(ramp(4, 4))).dpi).toBeUndefined();
    // 19,685 pixels per metre is 500 dpi; other comment spellings are read too.
    expect(decodeImage(writePng({ ...ramp(4, 4), dpi: 500 })).dpi).toBe(500);
    expect(readPgm(new TextEncoder().encode('P2\n# scanner: R307, resolution: 508 dpi\n1 1\n255\n7\n')).dpi).toBe(508);
    expect(readPgm(new TextEncoder().encode('P2\n# 1000 ppi\n1 1\n255\n7\n')).dpi).toBe(1000);
    expect(readPgm(new TextEncoder().encode('P2\n# made by hand\n1 1\n255\n7\n')).dpi).toBeUndefined();
  });

  it('reads plain P2 with comments and a 4-bit maxval', () => {
    const img = readPgm(new TextEncoder().encode('P2\n# c\n3 1\n15\n0 15 # x\n5\n'));
    expect(Array.from(img.pixels)).toEqual([0, 255, 85]);
  });

  it('refuses garbage and truncated data with BIOMETRICS_BAD_IMAGE', () => {
    expect(() => decodeImage(new Uint8Array([1, 2, 3]))).toThrow(expect.objectContaining({ code: 'BIOMETRICS_BAD_IMAGE' }));
    expect(() => decodeImage(new TextEncoder().encode('P5\n10 10\n255\nabc'))).toThrow(/truncated/);
  });

  it('4-bit packing keeps the 16 levels, high nibble first by default', () => {
    const img: GrayImage = { width: 3, height: 1, pixels: new Uint8Array([0, 255, 119]) };
    const packed = pack4bit(img);
    expect(Array.from(packed)).toEqual([0x0f, 0x70]);
    expect(unpack4bit(packed, 3, 1)).toEqual(img);
    expect(Array.from(unpack4bit(packed, 3, 1, { highNibbleFirst: false }).pixels)).toEqual([255, 0, 0]);
    expect(() => unpack4bit(new Uint8Array(1), 4, 4)).toThrow(/needs 8 bytes/);
  });

  it('resamples to 500 dpi', () => {
    const img = resampleToDpi(ramp(100, 50), 1000);
    expect([img.width, img.height]).toEqual([50, 25]);
    expect(resize(img, 50, 25)).toBe(img);
  });

  it('blurs keep the mean of a constant image and smooth an impulse', () => {
    const src = new Float32Array(21 * 21);
    src[10 * 21 + 10] = 441;
    const out = gaussianBlur(src, 21, 21, 2);
    let sum = 0;
    for (const v of out) sum += v;
    expect(sum).toBeCloseTo(441, 1);
    expect(out[10 * 21 + 10]!).toBeLessThan(441 / 10);
  });

  it('seeded randomness is reproducible and seeds mix', () => {
    const a = new SeededRandom(5),
      b = new SeededRandom(5);
    expect([a.next(), a.gauss()]).toEqual([b.next(), b.gauss()]);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
  });
});
