/**
 * Eye image → iris code.
 *
 * Localization (iris-segmentation.ts: reflections, pupil, limbus, and the refusals that hold on
 * every camera) → rubber-sheet normalization into a 32 × 256 strip (ρ from the pupil edge to the
 * limbus along rays from the pupil centre, θ all the way round) → what of it is not iris
 * (iris-occlusion.ts: eyelids, lashes, shadows, the reflections found before the pupil was
 * searched) → a refusal ('occluded') when too little iris is left → Gabor encoding by the ONNX
 * model → phase quantization (sign of the real and imaginary parts) → `IrisCode` with its mask and
 * a quality score (iris-quality.ts, in the spirit of ISO/IEC 29794-6).
 */
import { AgentError } from '../../core/errors.js';
import { sampleBilinear } from '../image/filters.js';
import { assertGrayImage, type GrayImage } from '../image/gray-image.js';
import { createIrisCode, type IrisCode } from '../iris/iris-code.js';
import { limbusDistance } from './iris-geometry.js';
import { occlusionMask } from './iris-occlusion.js';
import { irisQualityFeatures, irisQualityScore, unmaskedClutter, type IrisQualityFeatures } from './iris-quality.js';
import { localizeIris, type IrisCheckOptions, type IrisLocalization } from './iris-segmentation.js';
import { IRIS_MODEL } from './model-path.js';
import { getSession, ort } from './onnx-sessions.js';

export const IRIS_STRIP = { rows: 32, cols: 256, rings: 8, angles: 128 } as const;
const { rows: ROWS, cols: COLS, rings: RINGS, angles: ANGLES } = IRIS_STRIP;

export interface IrisExtractOptions extends IrisCheckOptions {
  /** Smallest fraction of usable code bits (default 0.35); fewer means the iris is mostly hidden. */
  minValidFraction?: number;
}

export interface IrisExtraction {
  code: IrisCode;
  localization: IrisLocalization;
  validFraction: number;
  /** What the quality score was made of (iris-quality.ts). */
  qualityFeatures: IrisQualityFeatures;
  timings: Record<string, number>;
}

/** The rubber-sheet strip of an eye and what of it is not iris. */
export interface NormalizedIris {
  /** ROWS × COLS gray levels, row 0 next to the pupil. */
  strip: Float32Array;
  /** 1 = not iris. */
  mask: Uint8Array;
  /** The iris's own level and spread (gray levels). */
  level: number;
  spread: number;
  /** Fraction of the strip that is iris. */
  visible: number;
}

/**
 * The strip along rays from the pupil centre, ρ from 6 % to 94 % of the way from the pupil's edge
 * to the limbus (clear of both boundaries' blur and of small localization errors), and its mask.
 */
export function normalizeIris(img: GrayImage, loc: IrisLocalization): NormalizedIris {
  const { pupil, iris } = loc;
  const W = img.width,
    H = img.height;
  const f = Float32Array.from(img.pixels);
  const strip = new Float32Array(ROWS * COLS);
  const given = new Uint8Array(ROWS * COLS);
  const r = loc.reflections;
  for (let j = 0; j < COLS; j++) {
    const th = (2 * Math.PI * j) / COLS;
    const lim = limbusDistance(pupil, iris, th);
    const c = Math.cos(th),
      s = Math.sin(th);
    for (let i = 0; i < ROWS; i++) {
      const rho = 0.06 + 0.88 * ((i + 0.5) / ROWS);
      const d = pupil.r + rho * (lim - pupil.r);
      const x = pupil.x + d * c,
        y = pupil.y + d * s;
      const k = i * COLS + j;
      strip[k] = sampleBilinear(f, W, H, x, y);
      if (x < 0 || y < 0 || x > W - 1 || y > H - 1) given[k] = 1;
      else {
        // The reflections found on the working copy (scale r.scale).
        const wx = Math.min(r.width - 1, Math.floor(x / r.scale)),
          wy = Math.min(r.height - 1, Math.floor(y / r.scale));
        if (r.mask[wy * r.width + wx]) given[k] = 1;
      }
    }
  }
  const occ = occlusionMask(strip, ROWS, COLS, given, loc.grayRange);
  return { strip, mask: occ.mask, level: occ.level, spread: occ.spread, visible: occ.visible };
}

function occluded(what: string, context: Record<string, unknown>): AgentError {
  return new AgentError(
    'BIOMETRICS_UNUSABLE_CAPTURE',
    what,
    { reason: 'occluded', ...context },
    {
      hint: 'ask the person to open the eye wide, look into the camera and keep hair and glasses frames out of the way',
      retryable: true,
    },
  );
}

/** A normalized iris → its code (the ONNX Gabor encoder), the valid bits and the usable fraction. */
export async function encodeNormalized(
  n: NormalizedIris,
  opts: IrisExtractOptions = {},
): Promise<{ bits: Uint8Array; valid: Uint8Array; validFraction: number }> {
  if (n.visible < 0.2) {
    throw occluded(`only ${(n.visible * 100).toFixed(0)} % of the iris is visible (eyelids, lashes, reflections)`, {
      visibleFraction: n.visible,
    });
  }
  // Zero mean, unit variance over the iris; not-iris pixels 0.
  let sum = 0,
    sq = 0,
    cnt = 0;
  for (let k = 0; k < n.strip.length; k++)
    if (!n.mask[k]) {
      sum += n.strip[k]!;
      sq += n.strip[k]! ** 2;
      cnt++;
    }
  const mean = sum / cnt,
    sd = Math.sqrt(Math.max(1e-6, sq / cnt - mean * mean));
  const norm = new Float32Array(ROWS * COLS);
  for (let k = 0; k < n.strip.length; k++) norm[k] = n.mask[k] ? 0 : (n.strip[k]! - mean) / sd;
  const session = await getSession(IRIS_MODEL);
  const out = await session.run({ strip: new ort.Tensor('float32', norm, [1, 1, ROWS, COLS]) });
  const resp = out.response!.data as Float32Array; // [2, RINGS, ANGLES]
  // A bit is valid when its neighbourhood on the strip is iris and its response is not tiny
  // (a bit near zero flips with noise).
  const mags = new Float64Array(RINGS * ANGLES);
  for (let k = 0; k < RINGS * ANGLES; k++) mags[k] = Math.hypot(resp[k]!, resp[RINGS * ANGLES + k]!);
  const magMedian = Float64Array.from(mags).sort()[mags.length >> 1]!;
  const bits = new Uint8Array(2 * RINGS * ANGLES);
  const valid = new Uint8Array(RINGS * ANGLES);
  let count = 0;
  const rowStep = ROWS / RINGS,
    colStep = COLS / ANGLES;
  for (let ring = 0; ring < RINGS; ring++)
    for (let a = 0; a < ANGLES; a++) {
      let bad = 0,
        total = 0;
      // The encoder's ring r is centred on strip row 4r, angle a on column 2a (stride 4 × 2).
      const ci = ring * rowStep;
      for (let i = Math.max(0, ci - 2); i <= Math.min(ROWS - 1, ci + 2); i++)
        for (let dj = -6; dj <= 6; dj++) {
          total++;
          bad += n.mask[i * COLS + ((colStep * a + dj + COLS) % COLS)]!;
        }
      const k = ring * ANGLES + a;
      const ok = bad / total < 0.2 && mags[k]! > 0.15 * magMedian;
      valid[k] = ok ? 1 : 0;
      count += ok ? 1 : 0;
      bits[k] = resp[k]! > 0 ? 1 : 0;
      bits[RINGS * ANGLES + k] = resp[RINGS * ANGLES + k]! > 0 ? 1 : 0;
    }
  const validFraction = count / (RINGS * ANGLES);
  if (validFraction < (opts.minValidFraction ?? 0.35)) {
    throw occluded(`only ${(validFraction * 100).toFixed(0)} % of the iris is usable (eyelids, lashes, reflections)`, {
      validFraction,
    });
  }
  return { bits, valid, validFraction };
}

/** The iris code of encodeNormalized's bits and valid flags (strip order: k, ring, angle). */
export function codeOfResponse(bits: Uint8Array, valid: Uint8Array, quality?: number): IrisCode {
  return createIrisCode(
    (ring, angle, k) => bits[k * RINGS * ANGLES + ring * ANGLES + angle] === 1,
    (ring, angle) => valid[ring * ANGLES + angle] === 1,
    quality,
  );
}

export async function extractIris(img: GrayImage, opts: IrisExtractOptions = {}): Promise<IrisExtraction> {
  assertGrayImage(img, 'eye image');
  const t0 = performance.now();
  const loc = localizeIris(img, opts);
  const t1 = performance.now();
  const n = normalizeIris(img, loc);
  const t2 = performance.now();
  const { bits, valid, validFraction } = await encodeNormalized(n, opts);
  const t3 = performance.now();
  const qualityFeatures = irisQualityFeatures(img, loc, { visible: n.visible, validFraction, clutter: unmaskedClutter(n) });
  const quality = irisQualityScore(qualityFeatures);
  const code = codeOfResponse(bits, valid, quality);
  return {
    code,
    localization: loc,
    validFraction,
    qualityFeatures,
    timings: { localize: t1 - t0, normalize: t2 - t1, encode: t3 - t2, total: performance.now() - t0 },
  };
}
