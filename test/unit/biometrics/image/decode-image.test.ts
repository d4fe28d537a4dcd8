import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../../../src/biometrics/image/decode-image.js';
import { readPgm, writePgm } from '../../../../src/biometrics/image/pgm.js';
import { pngDpi, writePng } from '../../../../src/biometrics/image/png.js';
import { ramp } from './gray-image.fixture.js';

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
});
