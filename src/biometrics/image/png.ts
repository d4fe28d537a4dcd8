/**
 * PNG read (any colour type, converted to 8-bit luma) and write (8-bit grayscale) with pngjs.
 */
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
    throw new AgentError('BIOMETRICS_BAD_IMAGE', `PNG: ${(err as Error).message}`, {}, { hint: 'pass a valid PGM (P5 or P2) or PNG grayscale image', cause: err });
  }
  const { width, height, data } = png;
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) {
    const r = data[4 * i]!, g = data[4 * i + 1]!, b = data[4 * i + 2]!, a = data[4 * i + 3]!;
    // ITU-R BT.601 luma, composited on white where transparent.
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    pixels[i] = Math.round((y * a + 255 * (255 - a)) / 255);
  }
  return { width, height, pixels };
}

export function writePng(img: GrayImage): Uint8Array {
  assertGrayImage(img);
  const png = new PNG({ width: img.width, height: img.height, colorType: 0, inputColorType: 0, bitDepth: 8, inputHasAlpha: false });
  png.data = Buffer.from(img.pixels);
  return new Uint8Array(PNG.sync.write(png, { colorType: 0, inputColorType: 0, bitDepth: 8, inputHasAlpha: false }));
}
