/**
 * Bilinear resampling, used to bring a scanner's image to the 500 dpi the fingerprint pipeline
 * is tuned for.
 */
import type { GrayImage } from './gray-image.js';

export function resize(img: GrayImage, width: number, height: number): GrayImage {
  if (width === img.width && height === img.height) return img;
  const out = new Uint8Array(width * height);
  const sx = img.width / width,
    sy = img.height / height;
  const src = img.pixels,
    W = img.width,
    H = img.height;
  for (let y = 0; y < height; y++) {
    const fy = Math.min(H - 1, Math.max(0, (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy),
      y1 = Math.min(H - 1, y0 + 1),
      ty = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.min(W - 1, Math.max(0, (x + 0.5) * sx - 0.5));
      const x0 = Math.floor(fx),
        x1 = Math.min(W - 1, x0 + 1),
        tx = fx - x0;
      const a = src[y0 * W + x0]! * (1 - tx) + src[y0 * W + x1]! * tx;
      const b = src[y1 * W + x0]! * (1 - tx) + src[y1 * W + x1]! * tx;
      out[y * width + x] = Math.round(a * (1 - ty) + b * ty);
    }
  }
  return { width, height, pixels: out };
}

/** Rescales an image captured at `fromDpi` to `toDpi` (default 500). */
export function resampleToDpi(img: GrayImage, fromDpi: number, toDpi = 500): GrayImage {
  if (fromDpi === toDpi) return img;
  const f = toDpi / fromDpi;
  return resize(img, Math.max(1, Math.round(img.width * f)), Math.max(1, Math.round(img.height * f)));
}
