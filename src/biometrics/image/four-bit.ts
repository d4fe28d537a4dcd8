/**
 * 4-bit grayscale as fingerprint modules send it (R30x UpImage, GT-521 raw image): two pixels a
 * byte, the left pixel in the high nibble by default. Expanded to 8 bits by ×17 (0x0 → 0, 0xF → 255).
 */
import { AgentError } from '../../core/errors.js';
import type { GrayImage } from './gray-image.js';

export interface FourBitOptions {
  /** True (default) when the first pixel of a byte is its high nibble. */
  highNibbleFirst?: boolean;
}

export function unpack4bit(bytes: Uint8Array, width: number, height: number, opts: FourBitOptions = {}): GrayImage {
  const n = width * height;
  const need = Math.ceil(n / 2);
  if (bytes.length < need) {
    throw new AgentError(
      'BIOMETRICS_BAD_IMAGE',
      `a ${width}×${height} 4-bit image needs ${need} bytes, got ${bytes.length}`,
      { width, height, bytes: bytes.length },
      { hint: 'check the image size configured for this scanner model' },
    );
  }
  const hi = opts.highNibbleFirst ?? true;
  const pixels = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const b = bytes[i >> 1]!;
    const first = (i & 1) === 0;
    const nib = first === hi ? b >> 4 : b & 0x0f;
    pixels[i] = nib * 17;
  }
  return { width, height, pixels };
}

export function pack4bit(img: GrayImage, opts: FourBitOptions = {}): Uint8Array {
  const hi = opts.highNibbleFirst ?? true;
  const out = new Uint8Array(Math.ceil(img.pixels.length / 2));
  for (let i = 0; i < img.pixels.length; i++) {
    const nib = Math.min(15, Math.round(img.pixels[i]! / 17));
    const first = (i & 1) === 0;
    out[i >> 1]! |= first === hi ? nib << 4 : nib;
  }
  return out;
}
