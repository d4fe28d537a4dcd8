/**
 * Eye image → iris code: segmentation (iris-segment.ts), Daugman rubber-sheet normalization to a
 * 32 × 256 strip (ρ from just outside the pupil to just inside the limbus × θ), the complex Gabor
 * encoder of models/iris-gabor-encoder.onnx sampled at the code's 8 rings × 128 angles, and
 * phase quantization (the signs of the real and imaginary parts) into the iris-code-v1 layout.
 * A bit is masked when the strip under its filter is mostly eyelid, lash or reflection, or when
 * its response is too weak to have a stable sign.
 */
import { createIrisCode, IRIS_ANGLES, IRIS_RINGS, type IrisCode } from '../iris/iris-code.js';
import { assertGrayImage, type GrayImage } from '../image/gray-image.js';
import { sampleBilinear } from '../image/filters.js';
import { rubberSheetPoint } from './iris-geometry.js';
import { refuse, segmentIris, type IrisSegmentation } from './iris-segment.js';
import { getSession, ort } from './onnx-sessions.js';

/** The encoder model and its strip size (models/build/iris-gabor-encoder.ts). */
export const IRIS_MODEL = { file: 'iris-gabor-encoder.onnx', rows: 32, cols: 256, input: 'strip', output: 'response' } as const;
/** Radial band of the strip: clear of the pupil edge and of the limbus blur. */
const RHO_FROM = 0.06;
const RHO_TO = 0.9;
/** Fraction of valid strip samples under a bit's filter needed to keep the bit. */
const MIN_SUPPORT = 0.75;
/** Bits whose |response| is below this fraction of the RMS response are masked (fragile bits). */
const FRAGILE = 0.08;
/** Fewer valid bits than this and the eye is refused as mostly covered. */
const MIN_VALID_FRACTION = 0.35;

export interface IrisStrip {
  values: Float32Array;
  valid: Uint8Array;
}

/** Rubber-sheet strip of the eye (zero mean, unit variance over the valid samples; 0 elsewhere). */
export function normalizeIris(img: GrayImage, seg: IrisSegmentation): IrisStrip {
  const { rows, cols } = IRIS_MODEL;
  const values = new Float32Array(rows * cols);
  const valid = new Uint8Array(rows * cols);
  const f = new Float32Array(img.pixels.length);
  for (let i = 0; i < f.length; i++) f[i] = img.pixels[i]!;
  let s = 0, s2 = 0, n = 0;
  for (let j = 0; j < cols; j++) {
    const theta = (2 * Math.PI * j) / cols;
    for (let i = 0; i < rows; i++) {
      const rho = RHO_FROM + ((RHO_TO - RHO_FROM) * (i + 0.5)) / rows;
      const [x, y] = rubberSheetPoint(seg.pupil, seg.iris, rho, theta);
      const k = i * cols + j;
      if (!seg.valid(x, y)) continue;
      const v = sampleBilinear(f, img.width, img.height, x, y);
      values[k] = v;
      valid[k] = 1;
      s += v; s2 += v * v; n++;
    }
  }
  const mean = n > 0 ? s / n : 0;
  const sd = n > 1 ? Math.sqrt(Math.max(1e-6, s2 / n - mean * mean)) : 1;
  for (let k = 0; k < values.length; k++) values[k] = valid[k] ? (values[k]! - mean) / sd : 0;
  return { values, valid };
}

export interface IrisExtraction {
  code: IrisCode;
  quality: number;
  segmentation: IrisSegmentation;
}

/** Eye image (8-bit, about 640×480) → iris code, or AgentError BIOMETRICS_UNUSABLE_CAPTURE with the reason. */
export async function extractIrisCode(img: GrayImage): Promise<IrisExtraction> {
  assertGrayImage(img, 'eye image');
  const seg = segmentIris(img);
  const strip = normalizeIris(img, seg);
  const { rows, cols } = IRIS_MODEL;
  const session = await getSession(IRIS_MODEL.file);
  const out = await session.run({ [IRIS_MODEL.input]: new ort.Tensor('float32', strip.values, [1, 1, rows, cols]) });
  const resp = out[IRIS_MODEL.output]!.data as Float32Array;
  const plane = IRIS_RINGS * IRIS_ANGLES;
  let rms = 0;
  for (let i = 0; i < resp.length; i++) rms += resp[i]! * resp[i]!;
  rms = Math.sqrt(rms / resp.length) || 1;

  // Support of each (ring, angle): valid samples in the filter's core (±2 rows, ±6 columns, wrapping).
  const rowStep = rows / IRIS_RINGS, colStep = cols / IRIS_ANGLES;
  const support = new Float32Array(plane);
  for (let r = 0; r < IRIS_RINGS; r++) {
    for (let a = 0; a < IRIS_ANGLES; a++) {
      let ok = 0, all = 0;
      for (let i = r * rowStep - 2; i <= r * rowStep + 2; i++) {
        if (i < 0 || i >= rows) continue;
        for (let dj = -6; dj <= 6; dj++) {
          const j = (((a * colStep + dj) % cols) + cols) % cols;
          ok += strip.valid[i * cols + j]!;
          all++;
        }
      }
      support[r * IRIS_ANGLES + a] = ok / all;
    }
  }
  const value = (ring: number, angle: number, k: number): number => resp[k * plane + ring * IRIS_ANGLES + angle]!;
  let validBits = 0;
  const isValid = (ring: number, angle: number, k: number): boolean => {
    const ok = support[ring * IRIS_ANGLES + angle]! >= MIN_SUPPORT && Math.abs(value(ring, angle, k)) >= FRAGILE * rms;
    if (ok) validBits++;
    return ok;
  };
  const probe = createIrisCode((ring, angle, k) => value(ring, angle, k) > 0, isValid);
  const validFraction = validBits / (2 * plane);
  if (validFraction < MIN_VALID_FRACTION) {
    throw refuse('closed', `only ${(validFraction * 100).toFixed(0)} % of the iris is visible`, { validFraction: Number(validFraction.toFixed(3)) });
  }
  // Quality: visible fraction, focus and size (ISO/IEC 29794-6 spirit: usable area, sharpness, resolution).
  const size = Math.min(1, seg.iris.r / (100 * Math.min(img.width / 640, img.height / 480)));
  const focus = Math.min(1, seg.sharpness / 0.7);
  const quality = Math.max(1, Math.min(100, Math.round(100 * Math.min(1, validFraction / 0.7) * focus * size)));
  return { code: { ...probe, quality }, quality, segmentation: seg };
}
