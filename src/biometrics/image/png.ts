/**
 * PNG read (any colour type, converted to 8-bit luma) and write (8-bit grayscale) with pngjs, and
 * the resolution in the pHYs chunk (pixels per metre), which pngjs does not handle, read and
 * written here.
 *
 * Tested in test/unit/biometrics/image/decode-image.test.ts (written and read back, the resolution
 * in pHYs).
 */
import { crc32 } from 'node:zlib';
import { PNG } from 'pngjs';
import { AgentError } from '../../core/errors.js';
import { assertGrayImage, type GrayImage } from './gray-image.js';

const MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && MAGIC.every((b, i) => bytes[i] === b);
}

export function readPng(bytes: Uint8Array): GrayImage {
  let png: PNG;
  try {
    png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (err) {
    throw new AgentError(
      'BIOMETRICS_BAD_IMAGE',
      `PNG: ${(err as Error).message}`,
      {},
      { hint: 'pass a valid PGM (P5 or P2) or PNG grayscale image', cause: err },
    );
  }
  const { width, height, data } = png;
  const dpi = pngDpi(bytes);
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) {
    const r = data[4 * i]!,
      g = data[4 * i + 1]!,
      b = data[4 * i + 2]!,
      a = data[4 * i + 3]!;
    // ITU-R BT.601 luma, composited on white where transparent.
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    pixels[i] = Math.round((y * a + 255 * (255 - a)) / 255);
  }
  return dpi === undefined ? { width, height, pixels } : { width, height, pixels, dpi };
}

const METRES_PER_INCH = 0.0254;

/** The horizontal resolution of a pHYs chunk in metres (unit 1), in dpi; undefined without one. */
export function pngDpi(bytes: Uint8Array): number | undefined {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let o = 8; o + 12 <= bytes.length; ) {
    const len = dv.getUint32(o);
    const type = String.fromCharCode(bytes[o + 4]!, bytes[o + 5]!, bytes[o + 6]!, bytes[o + 7]!);
    if (type === 'IDAT' || type === 'IEND') return undefined; // pHYs comes before the image data
    if (type === 'pHYs' && len === 9 && o + 17 <= bytes.length) {
      const ppm = dv.getUint32(o + 8);
      return bytes[o + 16] === 1 && ppm > 0 ? Math.round(ppm * METRES_PER_INCH * 10) / 10 : undefined;
    }
    o += 12 + len;
  }
  return undefined;
}

export function writePng(img: GrayImage): Uint8Array {
  assertGrayImage(img);
  const png = new PNG({ width: img.width, height: img.height, colorType: 0, inputColorType: 0, bitDepth: 8, inputHasAlpha: false });
  png.data = Buffer.from(img.pixels);
  const out = new Uint8Array(PNG.sync.write(png, { colorType: 0, inputColorType: 0, bitDepth: 8, inputHasAlpha: false }));
  return img.dpi !== undefined && img.dpi > 0 ? withPhys(out, img.dpi) : out;
}

/** The PNG with a pHYs chunk (metres) inserted after IHDR. */
function withPhys(png: Uint8Array, dpi: number): Uint8Array {
  const ihdrEnd = 8 + 12 + new DataView(png.buffer, png.byteOffset).getUint32(8);
  const chunk = new Uint8Array(21);
  const dv = new DataView(chunk.buffer);
  dv.setUint32(0, 9);
  chunk.set([0x70, 0x48, 0x59, 0x73], 4); // "pHYs"
  const ppm = Math.round(dpi / METRES_PER_INCH);
  dv.setUint32(8, ppm);
  dv.setUint32(12, ppm);
  chunk[16] = 1;
  dv.setUint32(17, crc32(chunk.subarray(4, 17)));
  const out = new Uint8Array(png.length + chunk.length);
  out.set(png.subarray(0, ihdrEnd), 0);
  out.set(chunk, ihdrEnd);
  out.set(png.subarray(ihdrEnd), ihdrEnd + chunk.length);
  return out;
}
