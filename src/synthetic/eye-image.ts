/**
 * Synthetic near-infrared eye images with their ground truth, for the iris simulator, the iris
 * pipeline's tests and the benchmark.
 *
 * The iris texture lives in rubber-sheet coordinates (ρ from the pupil edge 0 to the limbus 1,
 * θ around the pupil centre) and is seeded by the eye alone, so the same eye gives the same
 * texture — and therefore the same iris code — whatever the sample. Each sample (seeded
 * separately) varies position, size, pupil dilation, rotation, eyelid opening, lashes, specular
 * reflections and sensor noise. Options make an eye closed, off-axis, too small or blurred for
 * the refusal paths.
 */
import type { GrayImage } from '../biometrics/image/gray-image.js';
import { gaussianBlur } from '../biometrics/image/filters.js';
import { SeededRandom, mixSeed } from '../biometrics/image/seeded-random.js';
import { limbusDistance, type Circle } from '../biometrics/extract/iris-geometry.js';

export { limbusDistance, type Circle };

export interface EyeRenderOptions {
  width?: number;
  height?: number;
  /** Scales the eye (1 = an iris about 220 px across in a 640×480 image). */
  scale?: number;
  /** Sensor noise standard deviation in gray levels (default 3). */
  noise?: number;
  /** Optical blur sigma in pixels (default 0.7). */
  blur?: number;
  /** Eyelids shut: no iris to see. */
  closed?: boolean;
  /** Gaze away from the camera: the iris and pupil are seen as ellipses (aspect ratio 0.55). */
  offAxis?: boolean;
  /** Far from the camera: an iris under 40 px across... in radius terms about 35 px. */
  tooSmall?: boolean;
  /**
   * Out of focus: a blur of σ = 12 % of the iris radius, where real irises blurred stop matching
   * their own siblings (test/bench/iris-focus-calibration.ts; 6 px, 5 % of the radius, which was
   * used before, still matches).
   */
  blurred?: boolean;
  /**
   * Width in pixels of a soft pupil edge: the pupil's level rises linearly to the iris's over this
   * distance outside its radius (default 0: a step), as on eyes whose pupil margin is soft while the
   * iris texture is sharp.
   */
  pupilEdge?: number;
  /** Number of specular reflections (default 2). */
  reflections?: number;
  /** Number of eyelashes over the iris (default 24). */
  lashes?: number;
  /** Pupil radius over iris radius (default per eye, 0.34-0.44; MMU2's camera sees about 0.2-0.3). */
  pupilRatio?: number;
  /** Iris gray level (default per eye, 105-130; a dark iris under near infrared is about 60-80). */
  irisLevel?: number;
  /** One of the reflections falls inside the pupil, near its centre (as on MMU2's camera). */
  reflectionInPupil?: boolean;
}

export interface EyeTruth {
  pupil: Circle;
  iris: Circle;
  /** Texture rotation of this sample in radians (the code's angular shift). */
  rotation: number;
  /** Upper and lower eyelid curves: y = cy ∓ open·R ± k·(x − cx)². */
  eyelids: { upper: { y0: number; k: number }; lower: { y0: number; k: number } };
  reflections: Circle[];
  /** Horizontal aspect ratio of the projection (1 = on axis). */
  aspect: number;
}

export interface EyeImage extends GrayImage {
  truth: EyeTruth;
}

/** Gray level of the pupil. */
const PUPIL_LEVEL = 22;
const TEX_R = 48;
const TEX_T = 512;

/**
 * The textures of the eyes drawn last, most recent last. A texture is its eye's alone (seeded by
 * the eye, not the sample) and takes longer to make than the rest of a 640×480 picture together
 * (1.7 million cosines): a simulator shows the same few eyes again and again. Read only.
 */
const textures = new Map<number, Float32Array>();
const TEXTURES_KEPT = 32;

function eyeTexture(eyeSeed: number): Float32Array {
  let tex = textures.get(eyeSeed);
  if (tex) textures.delete(eyeSeed);
  else tex = irisTexture(eyeSeed);
  textures.set(eyeSeed, tex);
  if (textures.size > TEXTURES_KEPT) textures.delete(textures.keys().next().value!);
  return tex;
}

/** The eye's own iris texture on a TEX_R × TEX_T rubber-sheet grid, zero mean, unit variance. */
function irisTexture(eyeSeed: number): Float32Array {
  const rnd = new SeededRandom(mixSeed(0x1415, eyeSeed));
  const tex = new Float32Array(TEX_R * TEX_T);
  const comps = 70;
  const cosT = new Float32Array(TEX_T);
  for (let c = 0; c < comps; c++) {
    const n = rnd.int(3, 40);
    const m = rnd.range(0.2, 3.5);
    const ph = rnd.range(0, 2 * Math.PI);
    const slant = rnd.range(-1.5, 1.5);
    const amp = (1 / Math.sqrt(n)) * rnd.range(0.5, 1.5);
    const rc = rnd.range(0, 1),
      rw = rnd.range(0.2, 0.8);
    for (let j = 0; j < TEX_T; j++) cosT[j] = ((2 * Math.PI * j) / TEX_T) * n;
    for (let i = 0; i < TEX_R; i++) {
      const rho = i / (TEX_R - 1);
      const env = amp * Math.exp(-((rho - rc) ** 2) / (2 * rw * rw));
      const rp = 2 * Math.PI * m * rho + ph + slant * rho * n * 0.3;
      for (let j = 0; j < TEX_T; j++) tex[i * TEX_T + j]! += env * Math.cos(cosT[j]! + rp);
    }
  }
  // Crypts: dark blobs.
  const crypts = rnd.int(8, 18);
  for (let c = 0; c < crypts; c++) {
    const r0 = rnd.range(0.15, 0.85),
      t0 = rnd.range(0, TEX_T);
    const sr = rnd.range(0.04, 0.1),
      st = rnd.range(4, 14);
    const depth = rnd.range(0.8, 2);
    for (let i = 0; i < TEX_R; i++) {
      const dr = (i / (TEX_R - 1) - r0) / sr;
      if (Math.abs(dr) > 3) continue;
      for (let j = 0; j < TEX_T; j++) {
        let dt = Math.abs(j - t0);
        if (dt > TEX_T / 2) dt = TEX_T - dt;
        if (dt > 3 * st) continue;
        tex[i * TEX_T + j]! -= depth * Math.exp(-0.5 * (dr * dr + (dt / st) ** 2));
      }
    }
  }
  let mean = 0;
  for (const v of tex) mean += v;
  mean /= tex.length;
  let v2 = 0;
  for (const v of tex) v2 += (v - mean) ** 2;
  const sd = Math.sqrt(v2 / tex.length) || 1;
  for (let k = 0; k < tex.length; k++) tex[k] = (tex[k]! - mean) / sd;
  return tex;
}

/**
 * Math.hypot(a, b) to the last bit, written out: V8's algorithm (each side divided by the larger,
 * the squares summed, the root scaled back; its Kahan compensation is exactly 0 for two terms).
 * Node 20's Math.hypot is a builtin call that TurboFan does not inline, some 65 ns against 14 ns
 * here, and a picture takes about 200,000 of them. Zero, infinite and NaN sides go to Math.hypot.
 */
export function hypot(a: number, b: number): number {
  const x = Math.abs(a);
  const y = Math.abs(b);
  const max = Math.max(x, y);
  if (!(max > 0 && max < Number.POSITIVE_INFINITY)) return Math.hypot(a, b);
  const p = x / max;
  const q = y / max;
  return Math.sqrt(p * p + q * q) * max;
}

function sampleTexture(tex: Float32Array, rho: number, theta: number): number {
  const fr = Math.min(TEX_R - 1, Math.max(0, rho * (TEX_R - 1)));
  let ft = (theta / (2 * Math.PI)) * TEX_T;
  ft = ((ft % TEX_T) + TEX_T) % TEX_T;
  const r0 = Math.floor(fr),
    r1 = Math.min(TEX_R - 1, r0 + 1),
    tr = fr - r0;
  const t0 = Math.floor(ft) % TEX_T,
    t1 = (t0 + 1) % TEX_T,
    tt = ft - Math.floor(ft);
  const a = tex[r0 * TEX_T + t0]! * (1 - tt) + tex[r0 * TEX_T + t1]! * tt;
  const b = tex[r1 * TEX_T + t0]! * (1 - tt) + tex[r1 * TEX_T + t1]! * tt;
  return a * (1 - tr) + b * tr;
}

export function renderEye(eyeSeed: number, sampleSeed: number, opts: EyeRenderOptions = {}): EyeImage {
  const width = opts.width ?? 640,
    height = opts.height ?? 480;
  const eye = new SeededRandom(mixSeed(0xe7e, eyeSeed));
  const smp = new SeededRandom(mixSeed(0x5a3, eyeSeed, sampleSeed));
  const tex = eyeTexture(eyeSeed);

  // Per eye: size, pupil ratio and offset, iris brightness and contrast.
  const baseR = eye.range(100, 118);
  const basePupil = opts.pupilRatio ?? eye.range(0.34, 0.44);
  const pOffX = eye.range(-0.04, 0.04),
    pOffY = eye.range(-0.03, 0.05);
  const irisLevel = opts.irisLevel ?? eye.range(105, 130);
  const irisContrast = eye.range(26, 34);

  // Per sample: scale, position, dilation, rotation, eyelids.
  const scale = (opts.scale ?? 1) * (opts.tooSmall ? 0.3 : 1) * smp.range(0.97, 1.03) * Math.min(width / 640, height / 480);
  const R = baseR * scale;
  const cx = width / 2 + smp.range(-0.06, 0.06) * width;
  const cy = height / 2 + smp.range(-0.05, 0.05) * height;
  const iris: Circle = { x: cx, y: cy, r: R };
  const rp = R * (basePupil + smp.range(-0.05, 0.05));
  const pupil: Circle = { x: cx + pOffX * R, y: cy + pOffY * R, r: rp };
  const rotation = smp.range(-0.1, 0.1);
  const aspect = opts.offAxis ? 0.55 : 1;
  const openUp = opts.closed ? -0.35 : smp.range(0.62, 0.95);
  const openLow = opts.closed ? -0.25 : smp.range(0.8, 1.1);
  const kUp = smp.range(0.9, 1.3) / (3 * R);
  const kLow = smp.range(0.5, 0.8) / (3 * R);
  const upper = { y0: cy - openUp * R, k: kUp };
  const lower = { y0: cy + openLow * R, k: kLow };
  const eyeHalfWidth = 2.4 * R;
  const skin = 168 + smp.range(-8, 8);

  const img = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // Off-axis: the eye is seen squashed horizontally around the iris centre.
      const ex = cx + (x - cx) / aspect;
      const dxc = ex - cx;
      const yUp = upper.y0 + upper.k * dxc * dxc;
      const yLow = lower.y0 - lower.k * dxc * dxc;
      let v: number;
      if (y < yUp || y > yLow || Math.abs(dxc) > eyeHalfWidth) {
        v = skin + 10 * Math.cos(x / 37 + y / 53) + (y < yUp ? Math.min(12, (yUp - y) * 0.6) : 0);
      } else {
        const px = ex - pupil.x,
          py = y - pupil.y;
        const d = hypot(px, py);
        const diC = hypot(ex - cx, y - cy);
        if (d <= rp) {
          v = PUPIL_LEVEL;
        } else if (diC <= R) {
          const th = Math.atan2(py, px);
          const lim = limbusDistance(pupil, iris, th);
          const rho = (d - rp) / Math.max(1e-3, lim - rp);
          v = irisLevel + irisContrast * sampleTexture(tex, rho, th - rotation);
          // Darker limbus ring and a soft collarette, as in real irises.
          v -= 18 * Math.exp(-(((1 - rho) * 14) ** 2)) + 6 * Math.exp(-(((rho - 0.25) * 10) ** 2));
          // The deepest crypt is still brighter than the pupil (under near infrared the pupil is
          // the darkest thing in an eye): a soft floor 25 gray levels above it.
          if (v < PUPIL_LEVEL + 40) v = PUPIL_LEVEL + 25 + 15 * Math.exp((v - PUPIL_LEVEL - 40) / 15);
          if (opts.pupilEdge && d - rp < opts.pupilEdge) v = PUPIL_LEVEL + ((d - rp) / opts.pupilEdge) * (v - PUPIL_LEVEL);
        } else {
          v = 200 - 25 * Math.exp(-(((diC - R) / (0.5 * R)) ** 2));
        }
        // Shadow under the upper lid.
        v -= 25 * Math.exp((yUp - y) / 6);
      }
      img[y * width + x] = v;
    }
  }

  // Eyelashes: dark curved strokes hanging from the upper lid over the iris.
  const nLashes = opts.closed ? 40 : (opts.lashes ?? 24);
  for (let l = 0; l < nLashes; l++) {
    const sx = cx + aspect * smp.range(-1.3, 1.3) * R;
    const dxc = (sx - cx) / aspect;
    const sy = upper.y0 + upper.k * dxc * dxc;
    const len = smp.range(0.12, 0.35) * R;
    const bend = smp.range(-0.6, 0.6);
    const w = smp.range(0.6, 1.3) * Math.max(0.6, scale);
    const steps = Math.ceil(len);
    for (let s = 0; s <= steps; s++) {
      const t = s / steps;
      const lx = sx + bend * len * t * t;
      const ly = sy + len * t - 0.15 * len;
      const x0 = Math.floor(lx - w - 1),
        x1 = Math.ceil(lx + w + 1);
      const y0 = Math.floor(ly - w - 1),
        y1 = Math.ceil(ly + w + 1);
      for (let yy = Math.max(0, y0); yy <= Math.min(height - 1, y1); yy++) {
        for (let xx = Math.max(0, x0); xx <= Math.min(width - 1, x1); xx++) {
          const dd = hypot(xx - lx, yy - ly);
          if (dd < w + 0.5) {
            const a = Math.min(1, w + 0.5 - dd);
            const i = yy * width + xx;
            img[i] = img[i]! * (1 - 0.85 * a) + 30 * 0.85 * a;
          }
        }
      }
    }
  }

  // Specular reflections of the illuminators, near the pupil.
  const reflections: Circle[] = [];
  const nRefl = opts.closed ? 0 : (opts.reflections ?? 2);
  for (let k = 0; k < nRefl; k++) {
    const a = smp.range(0, 2 * Math.PI),
      d = (k === 0 && opts.reflectionInPupil ? 0.4 : smp.range(0.5, 1.3)) * rp;
    const c: Circle = {
      x: pupil.x + aspect * d * Math.cos(a),
      y: pupil.y + d * Math.sin(a) * 0.6,
      r: Math.max(2, smp.range(0.05, 0.08) * R),
    };
    reflections.push(c);
    for (let yy = Math.max(0, Math.floor(c.y - c.r - 2)); yy <= Math.min(height - 1, Math.ceil(c.y + c.r + 2)); yy++) {
      for (let xx = Math.max(0, Math.floor(c.x - c.r - 2)); xx <= Math.min(width - 1, Math.ceil(c.x + c.r + 2)); xx++) {
        const dd = hypot(xx - c.x, yy - c.y);
        const a2 = Math.min(1, Math.max(0, c.r + 1 - dd));
        const i = yy * width + xx;
        img[i] = img[i]! * (1 - a2) + 255 * a2;
      }
    }
  }

  const sigma = opts.blurred ? 0.12 * R : (opts.blur ?? 0.7);
  const blurred = gaussianBlur(img, width, height, sigma);
  const noise = opts.noise ?? 3;
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) {
    pixels[i] = Math.max(0, Math.min(255, Math.round(blurred[i]! + noise * smp.gauss())));
  }
  return {
    width,
    height,
    pixels,
    truth: { pupil: { x: pupil.x, y: pupil.y, r: rp }, iris, rotation, eyelids: { upper, lower }, reflections, aspect },
  };
}
