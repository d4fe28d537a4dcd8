/**
 * Poor captures made from good ones, for the quality benchmark and tests (`bench:real -- --degrade`): the
 * ways a real fingerprint capture goes wrong at a terminal, applied to a real image so the
 * finger stays the same and only the capture changes. Deterministic per seed.
 *
 * - faint: a light touch or a dry finger on an optical sensor: ridge contrast down to a quarter,
 *   sensor noise on top;
 * - smudged: a wet finger or one that slid: ridges and valleys run together (blur);
 * - partial: the finger half off the sensor: only a corner window of 55 % × 55 % shows print;
 * - dry: a dry, cracked finger: ridges broken by light patches covering about a third of the print.
 *
 * Tested in test/unit/biometrics/extract/finger-quality.test.ts (a smudged, partial or dry capture
 * scores lower than the print; a faint one is enhanced, kept and matched).
 */
import { boxBlur } from '../biometrics/image/filters.js';
import type { GrayImage } from '../biometrics/image/gray-image.js';
import { SeededRandom } from '../biometrics/image/seeded-random.js';

export const DEGRADATIONS = ['faint', 'smudged', 'partial', 'dry'] as const;
export type Degradation = (typeof DEGRADATIONS)[number];

const clamp = (v: number) => Math.max(0, Math.min(255, Math.round(v)));

export function degradeFinger(img: GrayImage, kind: Degradation, seed: number): GrayImage {
  const { width: W, height: H } = img;
  const rnd = new SeededRandom(seed);
  const f = Float32Array.from(img.pixels);
  const out = new Uint8Array(W * H);
  if (kind === 'faint') {
    for (let i = 0; i < f.length; i++) out[i] = clamp(255 - (255 - f[i]!) * 0.25 + 6 * rnd.gauss());
  } else if (kind === 'smudged') {
    const b = boxBlur(boxBlur(f, W, H, 2), W, H, 2);
    for (let i = 0; i < f.length; i++) out[i] = clamp(b[i]!);
  } else if (kind === 'partial') {
    const w = Math.round(W * 0.55),
      h = Math.round(H * 0.55);
    const x0 = rnd.next() < 0.5 ? 0 : W - w,
      y0 = rnd.next() < 0.5 ? 0 : H - h;
    let bg = 0;
    for (const v of img.pixels) bg = Math.max(bg, v);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        out[i] = x >= x0 && x < x0 + w && y >= y0 && y < y0 + h ? img.pixels[i]! : bg;
      }
  } else {
    // Light patches about a ridge wide, smoothed, over about a third of the image.
    const patches = new Float32Array(W * H);
    const count = Math.round((W * H * 0.33) / (Math.PI * 16));
    for (let k = 0; k < count; k++) {
      const cx = rnd.int(0, W - 1),
        cy = rnd.int(0, H - 1),
        r = rnd.range(2.5, 5.5);
      for (let y = Math.max(0, Math.floor(cy - r)); y <= Math.min(H - 1, Math.ceil(cy + r)); y++) {
        for (let x = Math.max(0, Math.floor(cx - r)); x <= Math.min(W - 1, Math.ceil(cx + r)); x++) {
          if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) patches[y * W + x] = 1;
        }
      }
    }
    const soft = boxBlur(patches, W, H, 1);
    for (let i = 0; i < f.length; i++) out[i] = clamp(f[i]! + (240 - f[i]!) * Math.min(1, soft[i]!));
  }
  return { width: W, height: H, pixels: out, ...(img.dpi !== undefined ? { dpi: img.dpi } : {}) };
}
