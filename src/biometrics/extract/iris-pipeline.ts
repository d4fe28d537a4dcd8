/**
 * Eye image → iris code.
 *
 * Localization (iris-segmentation.ts: pupil, limbus, refusal of closed / off-axis / too small /
 * blurred eyes) → rubber-sheet normalization into a 32 × 256 strip (ρ from the pupil edge to the
 * limbus along rays from the pupil centre, θ all the way round) with a noise mask relative to the
 * iris's own level (eyelids: smoothly brighter; lashes: darker; reflections: far brighter) → a
 * refusal ('occluded') when too little iris is left → Gabor encoding by the ONNX model
 * → phase quantization (sign of the real and imaginary parts) → `IrisCode` with its mask and a
 * quality score.
 */
import { AgentError } from '../../core/errors.js';
import { boxBlur, sampleBilinear } from '../image/filters.js';
import { assertGrayImage, type GrayImage } from '../image/gray-image.js';
import { createIrisCode, type IrisCode } from '../iris/iris-code.js';
import { limbusDistance } from './iris-geometry.js';
import { localizeIris, type IrisCheckOptions, type IrisLocalization } from './iris-segmentation.js';
import { IRIS_MODEL } from './model-path.js';
import { getSession, ort } from './onnx-sessions.js';

const ROWS = 32,
  COLS = 256,
  RINGS = 8,
  ANGLES = 128;

export interface IrisExtractOptions extends IrisCheckOptions {
  /** Smallest fraction of usable code bits (default 0.35); fewer means the iris is mostly hidden. */
  minValidFraction?: number;
}

export interface IrisExtraction {
  code: IrisCode;
  localization: IrisLocalization;
  validFraction: number;
  timings: Record<string, number>;
}

export async function extractIris(img: GrayImage, opts: IrisExtractOptions = {}): Promise<IrisExtraction> {
  assertGrayImage(img, 'eye image');
  const t0 = performance.now();
  const loc = localizeIris(img, opts);
  const t1 = performance.now();
  const { pupil, iris } = loc;
  const W = img.width,
    H = img.height;
  const f = Float32Array.from(img.pixels);
  const strip = new Float32Array(ROWS * COLS);
  for (let j = 0; j < COLS; j++) {
    const th = (2 * Math.PI * j) / COLS;
    const lim = limbusDistance(pupil, iris, th);
    const c = Math.cos(th),
      s = Math.sin(th);
    for (let i = 0; i < ROWS; i++) {
      // Stay clear of the boundaries themselves (edge blur and localization error).
      const rho = 0.06 + 0.88 * ((i + 0.5) / ROWS);
      const d = pupil.r + rho * (lim - pupil.r);
      strip[i * COLS + j] = sampleBilinear(f, W, H, pupil.x + d * c, pupil.y + d * s);
    }
  }
  // Noise mask, relative to this iris (cameras differ: an iris may be gray 50 or 150): its level m
  // and spread σ (median and 1.4826 × median absolute deviation) on the lateral sectors, where
  // eyelids rarely reach; lashes are darker than m − max(20, 2.5σ), eyelid skin is smoothly
  // brighter than m + max(20, 2.5σ), a reflection brighter than m + max(60, 5σ) or saturated.
  const lateral: number[] = [];
  for (let j = 0; j < COLS; j++) {
    if (Math.abs(Math.cos((2 * Math.PI * j) / COLS)) < 0.7) continue;
    for (let i = 0; i < ROWS; i++) lateral.push(strip[i * COLS + j]!);
  }
  lateral.sort((a, b) => a - b);
  const m = lateral[lateral.length >> 1]!;
  const dev = lateral.map((v) => Math.abs(v - m)).sort((a, b) => a - b);
  const sigma = 1.4826 * dev[dev.length >> 1]!;
  const darkBelow = m - Math.max(20, 2.5 * sigma),
    brightAbove = m + Math.max(20, 2.5 * sigma),
    glintAbove = Math.min(250, m + Math.max(60, 5 * sigma));
  const smooth = boxBlur(strip, COLS, ROWS, 2);
  const bad = new Uint8Array(ROWS * COLS);
  for (let k = 0; k < strip.length; k++) {
    const v = strip[k]!;
    if (v > glintAbove || v < darkBelow || smooth[k]! > brightAbove) bad[k] = 1;
  }
  const grown = boxBlur(Float32Array.from(bad), COLS, ROWS, 2);
  let sum = 0,
    sq = 0,
    n = 0;
  for (let k = 0; k < strip.length; k++)
    if (grown[k]! === 0) {
      sum += strip[k]!;
      sq += strip[k]! ** 2;
      n++;
    }
  if (n < strip.length * 0.2) {
    throw new AgentError(
      'BIOMETRICS_UNUSABLE_CAPTURE',
      'the iris is mostly hidden (eyelids, lashes, reflections)',
      { reason: 'occluded', visibleFraction: n / strip.length },
      {
        hint: 'ask the person to open the eye wide, look into the camera and keep hair and glasses frames out of the way',
        retryable: true,
      },
    );
  }
  const mean = sum / n,
    sd = Math.sqrt(Math.max(1e-6, sq / n - mean * mean));
  const norm = new Float32Array(ROWS * COLS);
  for (let k = 0; k < strip.length; k++) norm[k] = grown[k]! > 0 ? 0 : (strip[k]! - mean) / sd;
  const t2 = performance.now();
  const session = await getSession(IRIS_MODEL);
  const out = await session.run({ strip: new ort.Tensor('float32', norm, [1, 1, ROWS, COLS]) });
  const resp = out.response!.data as Float32Array; // [2, 8, 128]
  const t3 = performance.now();
  // A bit is valid when its neighbourhood in the strip is clean and its response is not tiny.
  const mags: number[] = [];
  for (let k = 0; k < RINGS * ANGLES; k++) mags.push(Math.hypot(resp[k]!, resp[RINGS * ANGLES + k]!));
  const magMedian = [...mags].sort((a, b) => a - b)[mags.length >> 1]!;
  const validAt = new Uint8Array(RINGS * ANGLES);
  let valid = 0;
  for (let r = 0; r < RINGS; r++)
    for (let a = 0; a < ANGLES; a++) {
      let badCount = 0,
        total = 0;
      for (let i = Math.max(0, r * 4 - 2); i <= Math.min(ROWS - 1, r * 4 + 2); i++) {
        for (let dj = -6; dj <= 6; dj++) {
          total++;
          badCount += grown[i * COLS + ((2 * a + dj + COLS) % COLS)]! > 0 ? 1 : 0;
        }
      }
      const ok = badCount / total < 0.2 && mags[r * ANGLES + a]! > 0.15 * magMedian;
      validAt[r * ANGLES + a] = ok ? 1 : 0;
      valid += ok ? 1 : 0;
    }
  const validFraction = valid / (RINGS * ANGLES);
  if (validFraction < (opts.minValidFraction ?? 0.35)) {
    throw new AgentError(
      'BIOMETRICS_UNUSABLE_CAPTURE',
      `only ${(validFraction * 100).toFixed(0)} % of the iris is usable (eyelids, lashes, reflections)`,
      { reason: 'occluded', validFraction },
      {
        hint: 'ask the person to open the eye wide, look into the camera and keep hair and glasses frames out of the way',
        retryable: true,
      },
    );
  }
  const sharpQ = loc.sharpness;
  const sizeQ = Math.min(1, iris.r / 100);
  const quality = Math.max(
    1,
    Math.min(100, Math.round(100 * Math.min(1, validFraction / 0.7) * (0.5 + 0.5 * sharpQ) * (0.6 + 0.4 * sizeQ))),
  );
  const code = createIrisCode(
    (ring, angle, k) => resp[k * RINGS * ANGLES + ring * ANGLES + angle]! > 0,
    (ring, angle) => validAt[ring * ANGLES + angle] === 1,
    quality,
  );
  return {
    code,
    localization: loc,
    validFraction,
    timings: { localize: t1 - t0, normalize: t2 - t1, encode: t3 - t2, total: performance.now() - t0 },
  };
}
