/**
 * The one image type of the extraction pipelines: 8-bit grayscale, row-major, one byte a pixel.
 *
 * Tested in test/unit/biometrics/extract/extractor.test.ts (a buffer too short for its size refused
 * with BIOMETRICS_BAD_IMAGE) and test/unit/biometrics/image/decode-image.test.ts.
 */
import { AgentError } from '../../core/errors.js';

export interface GrayImage {
  width: number;
  height: number;
  /** width × height bytes, row-major, 0 = black. */
  pixels: Uint8Array;
  /** Resolution in dots per inch when the source states it (PNG pHYs, PGM comment, the scanner); absent = unknown. */
  dpi?: number;
}

/** Checks that an image's size and buffer agree, or throws `BIOMETRICS_BAD_IMAGE`. */
export function assertGrayImage(img: GrayImage, what = 'image'): void {
  if (!Number.isInteger(img.width) || !Number.isInteger(img.height) || img.width <= 0 || img.height <= 0) {
    throw new AgentError(
      'BIOMETRICS_BAD_IMAGE',
      `${what} has an invalid size ${img.width}×${img.height}`,
      { width: img.width, height: img.height },
      { hint: 'pass a grayscale image with a positive width and height' },
    );
  }
  if (img.pixels.length !== img.width * img.height) {
    throw new AgentError(
      'BIOMETRICS_BAD_IMAGE',
      `${what} holds ${img.pixels.length} bytes, ${img.width}×${img.height} needs ${img.width * img.height}`,
      { width: img.width, height: img.height, bytes: img.pixels.length },
      { hint: 'the pixel buffer must hold one byte per pixel' },
    );
  }
}

/** Pixels as floats in 0..1 (the input of the ONNX models). */
export function toFloat01(img: GrayImage): Float32Array {
  const out = new Float32Array(img.pixels.length);
  for (let i = 0; i < out.length; i++) out[i] = img.pixels[i]! / 255;
  return out;
}
