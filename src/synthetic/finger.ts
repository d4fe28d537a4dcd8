/**
 * Synthetic fingers, seeded and reproducible, for the matcher benchmark, the scanner simulators
 * and the image renderer.
 *
 * The model is Larkin & Fletcher's phase model of a fingerprint: the ridge pattern is cos(ψ) with
 *
 *   ψ(x, y) = ψc(x, y) + Σᵢ pᵢ·atan2(y − yᵢ, x − xᵢ),   pᵢ = ±1
 *
 * where ψc is a smooth continuous phase (concentric arcs about a far centre, 2π·f·|p − c|, plus a
 * few low-frequency warps; f ≈ 1/9 px⁻¹ at 500 dpi) whose gradient gives the ridge orientation
 * field, and each spiral point (xᵢ, yᵢ) is one minutia. Ridges are where cos(ψ) > 0 (ridge centre
 * at ψ ≡ 0 mod 2π): a renderer draws `ridge darkness ∝ (1 + cos ψ) / 2`.
 *
 * Minutia type and direction follow from the field. With φ₀ = ψ at the point without its own
 * spiral term and α the direction of ∇φ₀, the mean of cos ψ on a small circle about the point is
 * −sin(φ₀ + pᵢ·α)·J₁(ρ|∇φ₀|): ridge-dominant (a bifurcation) when positive, valley-dominant (a
 * ridge ending) when negative. The generator nudges each point along the gradient (at most half a
 * ridge period) so that sin(φ₀ + pᵢα) = ±1, which makes every minutia a clean ending or
 * bifurcation. The side with one extra ridge is direction α − pᵢ·π/2 (image coordinates): an
 * ending points into its ridge and a bifurcation between its branches, both toward that side; the
 * ISO angle is its mirror (counter-clockwise as seen, y down).
 *
 * An impression maps the master finger onto a sensor: rotation, translation, a smooth non-linear
 * distortion, cropping to the sensor, position and angle noise, dropped and spurious minutiae
 * (the last three model an extractor's errors; set them to 0 for exact ground truth of a rendered
 * image). `toMaster` inverts the geometric mapping so a renderer can draw the impression as
 * cos(finger.phase(...toMaster(x, y))).
 */
import { mixSeed, SeededRandom } from '../biometrics/image/seeded-random.js';
import {
  DEFAULT_RESOLUTION_PPCM,
  normalizeAngle,
  type FingerTemplate,
  type Minutia,
  type MinutiaType,
} from '../biometrics/finger/template.js';

const TWO_PI = 2 * Math.PI;

export interface SyntheticFingerOptions {
  width?: number;
  height?: number;
}

export interface SyntheticFinger {
  seed: number;
  width: number;
  height: number;
  /** Mean ridge period in pixels (1/f). */
  period: number;
  /** Ground-truth minutiae of the master finger (35..70, at least 12 px apart). */
  minutiae: Minutia[];
  /** Spiral polarity (+1/−1) of each minutia, same order as `minutiae`. */
  polarity: Int8Array;
  /** Full phase including the spirals; ridges where cos(phase) > 0. */
  phase(x: number, y: number): number;
  /** True inside the finger's contact area (an ellipse filling the master image). */
  contains(x: number, y: number): boolean;
}

interface Field {
  f2pi: number;
  cx: number;
  cy: number;
  warps: Array<{ a: number; wx: number; wy: number; ph: number }>;
}

function continuousPhase(field: Field, x: number, y: number): number {
  let v = field.f2pi * Math.hypot(x - field.cx, y - field.cy);
  for (const w of field.warps) v += w.a * Math.sin(w.wx * x + w.wy * y + w.ph);
  return v;
}

function continuousGradient(field: Field, x: number, y: number): [number, number] {
  const dx = x - field.cx;
  const dy = y - field.cy;
  const r = Math.hypot(dx, dy) || 1;
  let gx = (field.f2pi * dx) / r;
  let gy = (field.f2pi * dy) / r;
  for (const w of field.warps) {
    const c = w.a * Math.cos(w.wx * x + w.wy * y + w.ph);
    gx += c * w.wx;
    gy += c * w.wy;
  }
  return [gx, gy];
}

function wrapPi(a: number): number {
  let r = (a + Math.PI) % TWO_PI;
  if (r < 0) r += TWO_PI;
  return r - Math.PI;
}

/** A seeded synthetic finger: a phase field with 35..70 spiral-point minutiae. */
export function syntheticFinger(seed: number, options: SyntheticFingerOptions = {}): SyntheticFinger {
  const width = options.width ?? 256;
  const height = options.height ?? 288;
  const rng = new SeededRandom(mixSeed(0xf1a9e, seed));
  const period = rng.range(8.2, 9.8);
  const f2pi = TWO_PI / period;
  const gamma = rng.range(0, TWO_PI);
  const dist = rng.range(200, 650);
  const field: Field = {
    f2pi,
    cx: width / 2 + dist * Math.cos(gamma),
    cy: height / 2 + dist * Math.sin(gamma),
    warps: [],
  };
  for (let k = 0; k < 3; k++) {
    const lambda = rng.range(160, 420);
    const dir = rng.range(0, TWO_PI);
    const omega = TWO_PI / lambda;
    // Each warp bends the gradient by at most 10 % so the ridge frequency never collapses.
    const a = (rng.range(0.04, 0.1) * f2pi) / omega;
    field.warps.push({ a, wx: omega * Math.cos(dir), wy: omega * Math.sin(dir), ph: rng.range(0, TWO_PI) });
  }

  const ax = width * 0.56;
  const ay = height * 0.56;
  const contains = (x: number, y: number): boolean => {
    const u = (x - width / 2) / ax;
    const v = (y - height / 2) / ay;
    return u * u + v * v <= 1;
  };
  const margin = 12;
  const inside = (x: number, y: number): boolean =>
    x >= margin && y >= margin && x <= width - 1 - margin && y <= height - 1 - margin && contains(x, y);

  const target = rng.int(35, 70);
  const xs: number[] = [];
  const ys: number[] = [];
  const ps: number[] = [];
  const wantEnding: boolean[] = [];

  const place = (minDist: number): void => {
    let tries = 0;
    while (xs.length < target && tries < 20_000) {
      tries++;
      const x = rng.range(margin, width - 1 - margin);
      const y = rng.range(margin, height - 1 - margin);
      if (!inside(x, y)) continue;
      let ok = true;
      for (let j = 0; j < xs.length; j++) {
        if (Math.hypot(x - xs[j]!, y - ys[j]!) < minDist) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      xs.push(x);
      ys.push(y);
      ps.push(rng.next() < 0.5 ? 1 : -1);
      wantEnding.push(rng.next() < 0.5);
    }
  };

  /** φ₀ and its gradient at minutia i without its own spiral. */
  const local = (i: number): { phi: number; gx: number; gy: number } => {
    const x = xs[i]!;
    const y = ys[i]!;
    let phi = continuousPhase(field, x, y);
    let [gx, gy] = continuousGradient(field, x, y);
    for (let j = 0; j < xs.length; j++) {
      if (j === i) continue;
      const dx = x - xs[j]!;
      const dy = y - ys[j]!;
      const r2 = dx * dx + dy * dy;
      phi += ps[j]! * Math.atan2(dy, dx);
      gx += (ps[j]! * -dy) / r2;
      gy += (ps[j]! * dx) / r2;
    }
    return { phi, gx, gy };
  };

  for (let round = 0; round < 6; round++) {
    place(18);
    for (let sweep = 0; sweep < 4; sweep++) {
      for (let i = 0; i < xs.length; i++) {
        const { phi, gx, gy } = local(i);
        const g = Math.hypot(gx, gy);
        const alpha = Math.atan2(gy, gx);
        const goal = wantEnding[i] ? Math.PI / 2 : -Math.PI / 2;
        const delta = wrapPi(goal - (phi + ps[i]! * alpha)) / g;
        const nx = xs[i]! + (delta * gx) / g;
        const ny = ys[i]! + (delta * gy) / g;
        if (inside(nx, ny)) {
          xs[i] = nx;
          ys[i] = ny;
        }
      }
    }
    // Keep minutiae at least 12 px apart so rendered images stay clean.
    let removed = false;
    for (let i = xs.length - 1; i >= 0; i--) {
      for (let j = 0; j < i; j++) {
        if (Math.hypot(xs[i]! - xs[j]!, ys[i]! - ys[j]!) < 12) {
          xs.splice(i, 1);
          ys.splice(i, 1);
          ps.splice(i, 1);
          wantEnding.splice(i, 1);
          removed = true;
          break;
        }
      }
    }
    if (!removed && xs.length >= 35) break;
  }

  const minutiae: Minutia[] = [];
  for (let i = 0; i < xs.length; i++) {
    const { phi, gx, gy } = local(i);
    const alpha = Math.atan2(gy, gx);
    const measure = -Math.sin(phi + ps[i]! * alpha);
    const type: MinutiaType = measure > 0 ? 'bifurcation' : 'ending';
    const dirImage = alpha - (ps[i]! * Math.PI) / 2;
    minutiae.push({ x: xs[i]!, y: ys[i]!, angle: normalizeAngle(-dirImage), type, quality: rng.int(60, 100) });
  }

  const n = xs.length;
  const fx = Float64Array.from(xs);
  const fy = Float64Array.from(ys);
  const fp = Int8Array.from(ps);
  const phase = (x: number, y: number): number => {
    let v = continuousPhase(field, x, y);
    for (let i = 0; i < n; i++) v += fp[i]! * Math.atan2(y - fy[i]!, x - fx[i]!);
    return v;
  };
  return { seed, width, height, period, minutiae, polarity: fp, phase, contains };
}

export interface ImpressionOptions {
  /** Sensor area (defaults to the finger's size); minutiae outside it are cropped. */
  width?: number;
  height?: number;
  /** Uniform rotation range in degrees (±); ignored when `rotation` is given. Default 20. */
  maxRotationDeg?: number;
  /** Uniform translation range in pixels (±); ignored when `dx`/`dy` are given. Default 30. */
  maxTranslation?: number;
  /** Fixed rotation in radians (image coordinates: positive turns clockwise as seen). */
  rotation?: number;
  dx?: number;
  dy?: number;
  /** Peak displacement of the smooth non-linear distortion, pixels. Default 5. */
  distortion?: number;
  /** Standard deviation of position noise, pixels. Default 1.5. */
  positionNoise?: number;
  /** Standard deviation of angle noise, degrees. Default 6. */
  angleNoiseDeg?: number;
  /** Probability that a true minutia is missed. Default 0.12. */
  dropRate?: number;
  /** Expected spurious minutiae per kept true minutia. Default 0.1. */
  spuriousRate?: number;
}

export interface Impression {
  width: number;
  height: number;
  /** Minutiae as an extractor would report them, in impression coordinates. */
  minutiae: Minutia[];
  /** For each minutia its index in `finger.minutiae`, or −1 for a spurious one. */
  masterIndex: number[];
  /** Maps impression coordinates back to the master finger (the inverse of the geometric mapping). */
  toMaster(x: number, y: number): [number, number];
  /** Maps master coordinates to impression coordinates. */
  fromMaster(x: number, y: number): [number, number];
  rotation: number;
  dx: number;
  dy: number;
  quality: number;
}

/** One seeded impression (capture) of a synthetic finger. */
export function impression(finger: SyntheticFinger, seed: number, options: ImpressionOptions = {}): Impression {
  const rng = new SeededRandom(mixSeed(0x1e9f, finger.seed, seed));
  const width = options.width ?? finger.width;
  const height = options.height ?? finger.height;
  const maxRot = ((options.maxRotationDeg ?? 20) * Math.PI) / 180;
  const maxT = options.maxTranslation ?? 30;
  const rotation = options.rotation ?? rng.range(-maxRot, maxRot);
  const dx = options.dx ?? rng.range(-maxT, maxT);
  const dy = options.dy ?? rng.range(-maxT, maxT);
  const distortion = options.distortion ?? 5;
  const posNoise = options.positionNoise ?? 1.5;
  const angNoise = ((options.angleNoiseDeg ?? 6) * Math.PI) / 180;
  const dropRate = options.dropRate ?? 0.12;
  const spuriousRate = options.spuriousRate ?? 0.1;

  const cmx = finger.width / 2;
  const cmy = finger.height / 2;
  const cos = Math.cos(rotation);
  const sin = Math.sin(rotation);
  // Smooth distortion: two long-wavelength sinusoids per axis, peak |D| ≤ distortion.
  const waves: Array<{ ax: number; ay: number; wx: number; wy: number; ph: number }> = [];
  for (let k = 0; k < 2; k++) {
    const lambda = rng.range(250, 450);
    const dir = rng.range(0, TWO_PI);
    const omega = TWO_PI / lambda;
    const amp = (distortion / Math.SQRT2) * rng.range(0.5, 1);
    waves.push({
      ax: amp * rng.range(-1, 1),
      ay: amp * rng.range(-1, 1),
      wx: omega * Math.cos(dir),
      wy: omega * Math.sin(dir),
      ph: rng.range(0, TWO_PI),
    });
  }
  const disp = (x: number, y: number): [number, number] => {
    let ux = 0;
    let uy = 0;
    for (const w of waves) {
      const s = Math.sin(w.wx * x + w.wy * y + w.ph);
      ux += w.ax * s;
      uy += w.ay * s;
    }
    return [ux, uy];
  };
  const fromMaster = (x: number, y: number): [number, number] => {
    const [ux, uy] = disp(x, y);
    const rx = x - cmx;
    const ry = y - cmy;
    return [cos * rx - sin * ry + cmx + dx + ux, sin * rx + cos * ry + cmy + dy + uy];
  };
  const toMaster = (qx: number, qy: number): [number, number] => {
    let px = qx;
    let py = qy;
    for (let it = 0; it < 10; it++) {
      const [ux, uy] = disp(px, py);
      const tx = qx - cmx - dx - ux;
      const ty = qy - cmy - dy - uy;
      px = cos * tx + sin * ty + cmx;
      py = -sin * tx + cos * ty + cmy;
    }
    return [px, py];
  };

  const border = 4;
  const onSensor = (x: number, y: number): boolean => x >= border && y >= border && x <= width - 1 - border && y <= height - 1 - border;
  const out: Array<{ m: Minutia; idx: number }> = [];
  finger.minutiae.forEach((m, idx) => {
    const drop = rng.next() < dropRate;
    const nx = rng.gauss() * posNoise;
    const ny = rng.gauss() * posNoise;
    const na = rng.gauss() * angNoise;
    const [qx, qy] = fromMaster(m.x, m.y);
    if (drop || !onSensor(qx, qy)) return;
    // Direction through the Jacobian of the mapping (image coordinates: (cos a, −sin a)).
    const vx = Math.cos(m.angle);
    const vy = -Math.sin(m.angle);
    const [ex, ey] = fromMaster(m.x + vx, m.y + vy);
    const angle = normalizeAngle(-Math.atan2(ey - qy, ex - qx) + na);
    const quality = Math.max(1, Math.min(100, Math.round(m.quality - rng.range(0, 25))));
    out.push({ m: { x: qx + nx, y: qy + ny, angle, type: m.type, quality }, idx });
  });
  const kept = out.length;
  let spurious = 0;
  for (let i = 0; i < kept; i++) if (rng.next() < spuriousRate) spurious++;
  for (let s = 0, tries = 0; s < spurious && tries < 1000; tries++) {
    const x = rng.range(border, width - 1 - border);
    const y = rng.range(border, height - 1 - border);
    const [mx, my] = toMaster(x, y);
    if (!finger.contains(mx, my)) continue;
    const type: MinutiaType = rng.next() < 0.5 ? 'ending' : 'bifurcation';
    out.push({ m: { x, y, angle: rng.range(0, TWO_PI), type, quality: rng.int(20, 60) }, idx: -1 });
    s++;
  }
  // Extractors report minutiae in no meaningful order: shuffle.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return {
    width,
    height,
    minutiae: out.map((o) => o.m),
    masterIndex: out.map((o) => o.idx),
    toMaster,
    fromMaster,
    rotation,
    dx,
    dy,
    quality: rng.int(40, 100),
  };
}

/** The impression as a finger template (positions rounded to whole pixels, as a record stores them). */
export function impressionTemplate(imp: Impression): FingerTemplate {
  return {
    width: imp.width,
    height: imp.height,
    resolutionPpcm: DEFAULT_RESOLUTION_PPCM,
    quality: imp.quality,
    minutiae: imp.minutiae.map((m) => ({
      ...m,
      x: Math.max(0, Math.min(imp.width - 1, Math.round(m.x))),
      y: Math.max(0, Math.min(imp.height - 1, Math.round(m.y))),
    })),
  };
}
