/**
 * Images for the simulators. A simulator asks an injectable source for the picture of virtual
 * finger or eye `id` (the synthetic seed) at its `impression`-th capture, then fits it to its
 * sensor's size. The sources of record are the seeded renderers in `src/synthetic/`;
 * tests may inject anything with the same shape.
 */
export interface SimImage {
  width: number;
  height: number;
  /** width × height bytes, 8 bits a pixel, row-major, 0 = black. */
  pixels: Uint8Array;
}

export type SimImageSource = (id: number, impression: number) => SimImage;

/**
 * Scales `img` to cover `width` × `height` (nearest neighbour, aspect kept) and crops the centre.
 * Returns the image as it is when it already has that size.
 */
export function fitImage(img: SimImage, width: number, height: number): Uint8Array {
  if (img.width === width && img.height === height) return img.pixels;
  const scale = Math.max(width / img.width, height / img.height);
  const offX = (img.width * scale - width) / 2;
  const offY = (img.height * scale - height) / 2;
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(img.height - 1, Math.max(0, Math.floor((y + offY) / scale)));
    const row = sy * img.width;
    for (let x = 0; x < width; x++) {
      const sx = Math.min(img.width - 1, Math.max(0, Math.floor((x + offX) / scale)));
      out[y * width + x] = img.pixels[row + sx]!;
    }
  }
  return out;
}

/** A small seeded PRNG (mulberry32) for simulator noise and opaque template filler. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A poor capture: contrast squeezed towards mid-gray and strong noise (the simulators'
 * "low-quality image" fault). Deterministic for a given seed.
 */
export function degradeImage(pixels: Uint8Array, seed: number): Uint8Array {
  const rnd = seededRandom(seed);
  const out = new Uint8Array(pixels.length);
  for (let i = 0; i < pixels.length; i++) {
    const v = 128 + (pixels[i]! - 128) * 0.25 + (rnd() - 0.5) * 120;
    out[i] = v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
  }
  return out;
}
