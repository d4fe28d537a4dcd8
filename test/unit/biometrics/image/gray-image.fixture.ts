/** Images for the image modules' tests. */
import type { GrayImage } from '../../../../src/biometrics/image/gray-image.js';

/** A `width` × `height` image whose pixels climb in steps of 7 (mod 256), row by row. */
export function ramp(width: number, height: number): GrayImage {
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 256;
  return { width, height, pixels };
}
