import { describe, expect, it } from 'vitest';
import { pack4bit, unpack4bit } from '../../../../src/biometrics/image/four-bit.js';
import type { GrayImage } from '../../../../src/biometrics/image/gray-image.js';

describe('4-bit images', () => {
  it('4-bit packing keeps the 16 levels, high nibble first by default', () => {
    const img: GrayImage = { width: 3, height: 1, pixels: new Uint8Array([0, 255, 119]) };
    const packed = pack4bit(img);
    expect(Array.from(packed)).toEqual([0x0f, 0x70]);
    expect(unpack4bit(packed, 3, 1)).toEqual(img);
    expect(Array.from(unpack4bit(packed, 3, 1, { highNibbleFirst: false }).pixels)).toEqual([255, 0, 0]);
    expect(() => unpack4bit(new Uint8Array(1), 4, 4)).toThrow(/needs 8 bytes/);
  });
});
