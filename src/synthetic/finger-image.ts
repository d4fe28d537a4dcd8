/**
 * Renders synthetic fingerprint images from the phase model of `finger.ts`, with the ground-truth
 * minutiae of the impression, for the scanner simulators, the extraction tests and the benchmark.
 *
 * Ridges are cos(ψ) of the master finger at `impression.toMaster(x, y)` (dark where cos ψ > 0),
 * shaped by a smooth pressure field (dry: thinner ridges, wet: thicker), a smooth contrast field,
 * ridge-oriented (Gabor-like, smoothed) noise plus sensor noise, and a light background outside
 * the finger's contact area.
 */
import type { GrayImage } from '../biometrics/image/gray-image.js';
import { gaussianBlur } from '../biometrics/image/filters.js';
import { SeededRandom, mixSeed } from '../biometrics/image/seeded-random.js';
import type { Minutia } from '../biometrics/finger/template.js';
import { impression as makeImpression, syntheticFinger, type Impression, type SyntheticFinger } from './finger.js';

export interface FingerRenderOptions {
  width?: number;
  height?: number;
  /** Output resolution; the model is at 500 dpi and is resampled geometrically. Default 500. */
  dpi?: number;
  /** Noise level 0..1 (default 0.35): sensor noise and ridge-breaking texture. */
  noise?: number;
  seed?: number;
}

export interface FingerImage extends GrayImage {
  /** 1 inside the finger's contact area. */
  contact: Uint8Array;
}

/** Smooth random field in about [−1, 1]: a few long-wavelength sinusoids. */
function smoothField(rnd: SeededRandom, waves: number, minLambda: number, maxLambda: number): (x: number, y: number) => number {
  const ws = Array.from({ length: waves }, () => {
    const l = rnd.range(minLambda, maxLambda),
      d = rnd.range(0, 2 * Math.PI);
    return { wx: (2 * Math.PI * Math.cos(d)) / l, wy: (2 * Math.PI * Math.sin(d)) / l, ph: rnd.range(0, 2 * Math.PI) };
  });
  return (x, y) => {
    let v = 0;
    for (const w of ws) v += Math.sin(w.wx * x + w.wy * y + w.ph);
    return v / Math.sqrt(waves);
  };
}

export function renderFingerprint(finger: SyntheticFinger, imp: Impression, opts: FingerRenderOptions = {}): FingerImage {
  const width = opts.width ?? imp.width,
    height = opts.height ?? imp.height;
  const scale = 500 / (opts.dpi ?? 500);
  const noise = opts.noise ?? 0.35;
  const rnd = new SeededRandom(mixSeed(0xf19e, finger.seed, opts.seed ?? 0));
  const pressure = smoothField(rnd, 3, 150, 400);
  const contrast = smoothField(rnd, 3, 120, 300);
  const pressureBias = rnd.range(-0.15, 0.15);
  const n = width * height;
  const ridge = new Float32Array(n);
  const contact = new Uint8Array(n);
  const white = new Float32Array(n);
  for (let i = 0; i < n; i++) white[i] = rnd.gauss();
  // Blob noise (dust, pores, dry patches): band-limited, at about the ridge scale.
  const blobs = gaussianBlur(white, width, height, 1.6);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const [mx, my] = imp.toMaster(x * scale, y * scale);
      if (!finger.contains(mx, my)) continue;
      contact[i] = 1;
      const c = Math.cos(finger.phase(mx, my));
      const bias = pressureBias + 0.18 * pressure(x, y) + noise * 0.9 * blobs[i]!;
      const dark = 1 / (1 + Math.exp(-4 * (c + bias)));
      const k = 0.75 + 0.2 * contrast(x, y);
      ridge[i] = k * dark;
    }
  }
  const soft = gaussianBlur(ridge, width, height, 0.7);
  const pixels = new Uint8Array(n);
  const bg = 228 + rnd.range(-10, 10);
  for (let i = 0; i < n; i++) {
    const v = bg - 185 * soft[i]! + noise * 18 * rnd.gauss();
    pixels[i] = Math.max(0, Math.min(255, Math.round(v)));
  }
  return { width, height, pixels, contact };
}

export interface SyntheticFingerImage extends FingerImage {
  /** Exact ground-truth minutiae in image coordinates (no drops, no noise, no spurious ones). */
  minutiae: Minutia[];
  finger: SyntheticFinger;
  impression: Impression;
}

/**
 * One rendered impression of a synthetic finger, from numbers only (for the simulators): finger
 * `fingerId`, capture `impressionNo`, on a width × height sensor at 500 dpi.
 */
export function syntheticFingerImage(
  fingerId: number,
  impressionNo: number,
  width = 256,
  height = 288,
  noise?: number,
): SyntheticFingerImage {
  const mw = Math.max(width, 220),
    mh = Math.max(height, 260);
  const finger = syntheticFinger(fingerId, { width: mw, height: mh });
  const rnd = new SeededRandom(mixSeed(0x1a9e, fingerId, impressionNo));
  const imp = makeImpression(finger, impressionNo, {
    width,
    height,
    rotation: rnd.range(-0.25, 0.25),
    dx: (width - mw) / 2 + rnd.range(-18, 18),
    dy: (height - mh) / 2 + rnd.range(-18, 18),
    positionNoise: 0,
    angleNoiseDeg: 0,
    dropRate: 0,
    spuriousRate: 0,
  });
  const img = renderFingerprint(finger, imp, { width, height, seed: impressionNo, ...(noise === undefined ? {} : { noise }) });
  const minutiae = imp.minutiae.filter((m) => {
    const x = Math.round(m.x),
      y = Math.round(m.y);
    return x >= 0 && y >= 0 && x < width && y < height && img.contact[y * width + x] === 1;
  });
  return { ...img, minutiae, finger, impression: imp };
}

/**
 * The scanner simulators' finger source (src/synthetic/simulator-sources.ts wires it in): virtual
 * finger `fingerId` at its `impressionNo`-th capture, an 8-bit 500 dpi image of the sensor's size
 * (R30x 256×288 by default).
 */
export function renderFingerImage(fingerId: number, impressionNo: number, opts: { width?: number; height?: number } = {}): GrayImage {
  const img = syntheticFingerImage(fingerId, impressionNo, opts.width ?? 256, opts.height ?? 288);
  return { width: img.width, height: img.height, pixels: img.pixels };
}

/** The exact minutiae of the image `renderFingerImage` draws with the same arguments (benchmark ground truth). */
export function fingerImageTruth(fingerId: number, impressionNo: number, opts: { width?: number; height?: number } = {}): Minutia[] {
  return syntheticFingerImage(fingerId, impressionNo, opts.width ?? 256, opts.height ?? 288).minutiae;
}
