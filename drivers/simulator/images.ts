/**
 * Images for the simulators. A simulator asks an injected source for the picture of virtual
 * finger or eye `id` (the synthetic seed) at its `impression`-th capture, then fits it to its
 * sensor's size. `drivers/` knows no renderer: the callers wire one in. The sources of record are
 * the seeded renderers of `src/synthetic/` (`src/synthetic/simulator-sources.ts`); the cheap
 * stand-ins below serve tests that need no real ridges or iris texture.
 *
 * Tested in test/unit/drivers/simulated.test.ts (the synthetic images fitted to the GT-521 and iris
 * sensors), test/unit/drivers/gt521/driver.test.ts (a low-quality image) and
 * test/unit/synthetic/finger-image.test.ts.
 */
export interface SimImage {
  width: number;
  height: number;
  /** width × height bytes, 8 bits a pixel, row-major, 0 = black. */
  pixels: Uint8Array;
}

export type SimImageSource = (id: number, impression: number) => SimImage;

/** An eye image, with the iris and pupil circles when the source knows them. */
export interface SimEyeImage extends SimImage {
  truth?: { pupil: { x: number; y: number; r: number }; iris: { x: number; y: number; r: number } };
}

export type SimEyeImageSource = (eyeId: number, impression: number) => SimEyeImage;

/** One image source per modality (keys are the ScannerModality names): a family's simulator takes the one of its modality. */
export interface SimulatorImages {
  finger: SimImageSource;
  iris: SimEyeImageSource;
}

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

/** A cheap stand-in finger picture (seeded ridge rings), for tests that need no real ridges. */
export function fallbackFingerImage(id: number, impression: number): SimImage {
  const width = 256;
  const height = 288;
  const rnd = seededRandom(id >>> 0);
  const cx = width * (0.4 + 0.2 * rnd());
  const cy = height * (0.4 + 0.2 * rnd());
  const period = 7 + 3 * rnd();
  const jitter = seededRandom((id * 7919 + impression) >>> 0);
  const dx = (jitter() - 0.5) * 12;
  const dy = (jitter() - 0.5) * 12;
  const pixels = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const r = Math.hypot(x - cx - dx, (y - cy - dy) * 0.8);
      const inside = Math.hypot((x - width / 2) / (width * 0.42), (y - height / 2) / (height * 0.45)) < 1;
      pixels[y * width + x] = inside ? Math.round(128 + 110 * Math.sin((2 * Math.PI * r) / period)) : 235;
    }
  }
  return { width, height, pixels };
}

/**
 * A cheap stand-in eye (a textured iris disc with a dark pupil on a bright sclera, its circles in
 * `truth`), for tests that need no real iris texture.
 */
export function fallbackEyeImage(eyeId: number, impression: number): SimEyeImage {
  const width = 640;
  const height = 480;
  const iris = { x: 320 + (impression % 5), y: 240, r: 100 };
  const pupil = { x: iris.x, y: iris.y, r: 35 };
  const pixels = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot(x - iris.x, y - iris.y);
      pixels[y * width + x] = d < pupil.r ? 10 : d < iris.r ? 60 + ((x * eyeId + y) % 90) : 200;
    }
  }
  return { width, height, pixels, truth: { pupil, iris } };
}

/** The stand-ins as a set, for tests and for anything that needs a simulator but no biometrics. */
export const fallbackImages: SimulatorImages = { finger: fallbackFingerImage, iris: fallbackEyeImage };
