/**
 * Fingerprint image → minutiae template.
 *
 * 500 dpi grayscale (others resampled) → segmentation → orientation field → ridge period →
 * enhancement by the ONNX Gabor bank (per-pixel selection of orientation × period) →
 * binarization → thinning → minutiae (crossing number) with direction and quality → removal of
 * false minutiae → `FingerTemplate` (encode with `encodeIso19794_2`).
 */
import { AgentError } from '../../core/errors.js';
import { DEFAULT_RESOLUTION_PPCM, type FingerTemplate } from '../finger/template.js';
import { boxBlur } from '../image/filters.js';
import { assertGrayImage, type GrayImage } from '../image/gray-image.js';
import { resampleToDpi } from '../image/resample.js';
import { orientationField, ridgePeriod, segment } from './finger-fields.js';
import { fingerQualityScore, printAreaMm2, ridgeClarity, ridgeSharpness, type FingerQualityFeatures } from './finger-quality.js';
import { detectMinutiae, type MinutiaeOptions } from './minutiae-detect.js';
import { FINGER_MODEL } from './model-path.js';
import { getSession, ort } from './onnx-sessions.js';
import { thin } from './thinning.js';

/**
 * The bank's layout, as models/build/finger-gabor-bank.ts builds it (a test checks they agree;
 * the builder is not imported here because it needs the build-time onnx-proto package).
 */
export const FINGER_BANK_LAYOUT = { orientations: 16, periods: [7.5, 10] } as const;
const ORIENTATIONS = FINGER_BANK_LAYOUT.orientations;
const PERIODS = FINGER_BANK_LAYOUT.periods;

export interface FingerExtractOptions extends MinutiaeOptions {
  /** Resolution of the input image; without it the image's own (`GrayImage.dpi`), else 500 is assumed. Resampled to 500 dpi. */
  dpi?: number;
  /** Segmentation block size and relative contrast threshold. */
  segmentBlock?: number;
  segmentThreshold?: number;
  /** Orientation smoothing radius, px (default 8). */
  orientationRadius?: number;
  /** At most this many minutiae, best quality first (default 80). */
  maxMinutiae?: number;
  /** Minimum fingerprint area as a fraction of the image (default 0.15). */
  minCoverage?: number;
  /**
   * Minimum mean ridge-orientation coherence over that area (default 0.25): under it the image is
   * noise, not a finger (pure noise measures 0.15-0.19; the faintest, driest real prints of the
   * shared sets 0.30-0.40, and those are enrolled with a low quality, never refused).
   */
  minCoherence?: number;
}

/** Where the resolution an image was read at came from: given, stated by the image, or assumed. */
export type DpiSource = 'given' | 'image' | 'assumed';

/** The scanner resolutions a fingerprint image may plausibly have (ISO/IEC 19794-4 uses 250–1000 and up). */
export const FINGER_DPI_RANGE = { min: 250, max: 2000 } as const;

/**
 * The resolution to read a fingerprint image at: the one given (the scanner's, --dpi), else the
 * one the image states when it is a plausible scanner resolution (a PNG saved at a screen default
 * of 72 or 96 dpi says nothing about the finger), else 500 dpi, assumed. `ignored` is an image's
 * implausible statement.
 */
export function fingerResolution(
  given: number | undefined,
  stated: number | undefined,
): { dpi: number; source: DpiSource; ignored?: number } {
  const plausible = (v: number | undefined): v is number => v !== undefined && v >= FINGER_DPI_RANGE.min && v <= FINGER_DPI_RANGE.max;
  if (given !== undefined && given > 0) return { dpi: given, source: 'given' };
  if (plausible(stated)) return { dpi: stated, source: 'image' };
  return { dpi: 500, source: 'assumed', ...(stated !== undefined && stated > 0 ? { ignored: stated } : {}) };
}

export interface FingerExtraction {
  template: FingerTemplate;
  /** The resolution the image was read at and where it came from. */
  dpi: number;
  dpiSource: DpiSource;
  /** What the quality score was made of (finger-quality.ts). */
  qualityFeatures: FingerQualityFeatures;
  /** Timings of the stages in milliseconds. */
  timings: Record<string, number>;
}

export async function extractFinger(input: GrayImage, opts: FingerExtractOptions = {}): Promise<FingerExtraction> {
  assertGrayImage(input, 'fingerprint image');
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  const resolution = fingerResolution(opts.dpi, input.dpi);
  const img = resampleToDpi(input, resolution.dpi, 500);
  const { width: W, height: H } = img;
  if (W < 64 || H < 64) {
    throw new AgentError(
      'BIOMETRICS_UNUSABLE_CAPTURE',
      `fingerprint image ${W}×${H} at 500 dpi is too small to extract minutiae`,
      { reason: 'too-small', width: W, height: H },
      { hint: 'capture a larger area of the finger or check the configured dpi' },
    );
  }
  const n = W * H;
  const f = new Float32Array(n);
  for (let i = 0; i < n; i++) f[i] = 1 - img.pixels[i]! / 255;

  const seg = segment(f, W, H, opts.segmentBlock ?? 12, opts.segmentThreshold ?? 0.3);
  if (seg.coverage < (opts.minCoverage ?? 0.15)) {
    throw new AgentError(
      'BIOMETRICS_UNUSABLE_CAPTURE',
      `no fingerprint found: only ${(seg.coverage * 100).toFixed(0)} % of the image shows ridges`,
      { reason: 'no-finger', coverage: seg.coverage },
      { hint: 'place the finger flat on the sensor and capture again', retryable: true },
    );
  }
  timings.segment = performance.now() - t0;

  // Local normalization: zero mean, unit contrast (ridges positive).
  const mean = boxBlur(f, W, H, 8);
  const centred = new Float32Array(n);
  for (let i = 0; i < n; i++) centred[i] = f[i]! - mean[i]!;
  const sq = new Float32Array(n);
  for (let i = 0; i < n; i++) sq[i] = centred[i]! * centred[i]!;
  const varL = boxBlur(sq, W, H, 8);
  for (let i = 0; i < n; i++) centred[i] = centred[i]! / Math.sqrt(varL[i]! + 1e-4);

  const field = orientationField(centred, W, H, opts.orientationRadius ?? 8);
  timings.orientation = performance.now() - t0 - timings.segment;
  let coh = 0,
    cnt = 0;
  for (let i = 0; i < n; i++)
    if (seg.mask[i]) {
      coh += field.coherence[i]!;
      cnt++;
    }
  const meanCoherence = cnt ? coh / cnt : 0;
  if (meanCoherence < (opts.minCoherence ?? 0.25)) {
    throw new AgentError(
      'BIOMETRICS_UNUSABLE_CAPTURE',
      `no ridge pattern found (orientation coherence ${meanCoherence.toFixed(2)})`,
      { reason: 'no-ridges', coherence: meanCoherence },
      { hint: 'clean the sensor and the finger, press the finger flat and capture again', retryable: true },
    );
  }
  const period = ridgePeriod(centred, W, H, field, seg.mask);

  // Selection weights: bilinear in orientation (circular) × period.
  const K = ORIENTATIONS * PERIODS.length;
  const sel = new Float32Array(K * n);
  const p0 = PERIODS[0]!,
    p1 = PERIODS[1]!;
  for (let i = 0; i < n; i++) {
    if (!seg.mask[i]) continue;
    const o = (field.theta[i]! / Math.PI) * ORIENTATIONS;
    const o0 = Math.floor(o) % ORIENTATIONS,
      o1 = (o0 + 1) % ORIENTATIONS,
      to = o - Math.floor(o);
    const tp = Math.min(1, Math.max(0, (period[i]! - p0) / (p1 - p0)));
    sel[o0 * n + i] = (1 - to) * (1 - tp);
    sel[o1 * n + i] = to * (1 - tp);
    sel[(ORIENTATIONS + o0) * n + i] = (1 - to) * tp;
    sel[(ORIENTATIONS + o1) * n + i] = to * tp;
  }
  const t1 = performance.now();
  const session = await getSession(FINGER_MODEL);
  const out = await session.run({
    image: new ort.Tensor('float32', centred, [1, 1, H, W]),
    select: new ort.Tensor('float32', sel, [1, K, H, W]),
  });
  const enhanced = out.enhanced!.data as Float32Array;
  timings.enhance = performance.now() - t1;

  const t2 = performance.now();
  const bin = new Uint8Array(n);
  for (let i = 0; i < n; i++) bin[i] = seg.mask[i] && enhanced[i]! > 0 ? 1 : 0;
  const ridges = bin.slice();
  const skeleton = thin(bin, W, H);
  let minutiae = detectMinutiae(skeleton, W, H, seg.mask, field, opts, ridges);
  const max = opts.maxMinutiae ?? 80;
  if (minutiae.length > max) minutiae = [...minutiae].sort((a, b) => b.quality - a.quality).slice(0, max);
  timings.minutiae = performance.now() - t2;

  const qualityFeatures: FingerQualityFeatures = {
    clarity: ridgeClarity(centred, enhanced, seg.mask, W, H),
    coherence: meanCoherence,
    areaMm2: printAreaMm2(seg.mask),
    minutiae: minutiae.length,
    sharpness: ridgeSharpness(f, varL, seg.mask, W, H),
  };
  const quality = fingerQualityScore(qualityFeatures);
  timings.total = performance.now() - t0;
  return {
    template: { width: W, height: H, resolutionPpcm: DEFAULT_RESOLUTION_PPCM, quality, minutiae },
    dpi: resolution.dpi,
    dpiSource: resolution.source,
    qualityFeatures,
    timings,
  };
}
