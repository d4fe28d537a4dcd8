/**
 * Synthetic iris codes, seeded and reproducible, for tests, simulators and the benchmark.
 *
 * An eye is a smooth random field per (phase bit k, ring, angle): white Gaussian noise smoothed
 * circularly along the angle and across rings, so neighbouring bits correlate the way the bits of
 * real Gabor phase codes do (a real code of 2048 bits carries a few hundred degrees of freedom).
 * A capture of that eye adds an independent smooth noise field (bits flip where the eye's field
 * is weak, as in real captures), rotates the eye by a whole number of angular positions (head
 * tilt), and masks eyelids (upper around 90°, lower around 270°, deeper in the outer rings) and a
 * few specular reflections; masked bits carry garbage, as an extractor's would.
 */
import { SeededRandom, mixSeed } from '../biometrics/image/seeded-random.js';
import { IRIS_ANGLES, IRIS_BITS_PER_SAMPLE, IRIS_RINGS, createIrisCode, type IrisCode } from '../biometrics/iris/iris-code.js';

// Local copies: imported bindings are getters under some loaders, too slow in these loops.
const RINGS: number = IRIS_RINGS;
const ANGLES: number = IRIS_ANGLES;
const PHASES: number = IRIS_BITS_PER_SAMPLE;
const FIELD = PHASES * RINGS * ANGLES;
const ANGULAR_KERNEL = [1, 3, 5, 6, 5, 3, 1];
const RADIAL_KERNEL = [1, 2, 1];

export interface SyntheticIrisEye {
  seed: number;
  /** Unit-variance smooth field, index (k · 8 + ring) · 128 + angle. */
  field: Float32Array;
}

export interface SyntheticIrisSampleOptions {
  /** Largest rotation in angular positions, either way (default 4: two captures differ by ≤ 8). */
  maxRotation?: number;
  /** Noise-to-signal ratio range of the capture noise field (default [0.3, 0.7]: 10–19 % flips). */
  noise?: [number, number];
  /** Eyelid and reflection masks (default true). */
  occlusion?: boolean;
}

export interface SyntheticIrisSample {
  code: IrisCode;
  /** The rotation applied, in angular positions: sample column a + rotation shows eye column a. */
  rotation: number;
}

function smoothField(rng: SeededRandom): Float32Array {
  const raw = new Float32Array(FIELD);
  // Uniform white noise: after the 21-tap smoothing it is Gaussian enough, and far cheaper.
  for (let i = 0; i < FIELD; i++) raw[i] = rng.next() - 0.5;
  const tmp = new Float32Array(FIELD);
  const ha = ANGULAR_KERNEL.length >> 1;
  for (let row = 0; row < PHASES * RINGS; row++) {
    const base = row * ANGLES;
    for (let a = 0; a < ANGLES; a++) {
      let s = 0;
      for (let t = 0; t < ANGULAR_KERNEL.length; t++) s += ANGULAR_KERNEL[t]! * raw[base + ((a + t - ha + ANGLES) % ANGLES)]!;
      tmp[base + a] = s;
    }
  }
  const out = new Float32Array(FIELD);
  let sum2 = 0;
  for (let k = 0; k < PHASES; k++) {
    for (let ring = 0; ring < RINGS; ring++) {
      for (let a = 0; a < ANGLES; a++) {
        let s = 0;
        for (let t = 0; t < RADIAL_KERNEL.length; t++) {
          const r = Math.min(RINGS - 1, Math.max(0, ring + t - 1));
          s += RADIAL_KERNEL[t]! * tmp[(k * RINGS + r) * ANGLES + a]!;
        }
        out[(k * RINGS + ring) * ANGLES + a] = s;
        sum2 += s * s;
      }
    }
  }
  const scale = 1 / Math.sqrt(sum2 / FIELD);
  for (let i = 0; i < FIELD; i++) out[i]! *= scale;
  return out;
}

export function syntheticIrisEye(seed: number): SyntheticIrisEye {
  return { seed, field: smoothField(new SeededRandom(mixSeed(0x1815, seed))) };
}

/** The eye's own code, unrotated, without noise or occlusion (an ideal enrolment). */
export function idealIrisCode(eye: SyntheticIrisEye): IrisCode {
  return createIrisCode(
    (ring, angle, k) => eye.field[(k * RINGS + ring) * ANGLES + angle]! > 0,
    () => true,
    100,
  );
}

/** One capture of `eye`; the same (eye, sampleSeed, options) always gives the same code. */
export function syntheticIrisSample(
  eye: SyntheticIrisEye,
  sampleSeed: number,
  options: SyntheticIrisSampleOptions = {},
): SyntheticIrisSample {
  const rng = new SeededRandom(mixSeed(0x5a3b, eye.seed, sampleSeed));
  const maxRot = options.maxRotation ?? 4;
  const [nLo, nHi] = options.noise ?? [0.3, 0.7];
  const rotation = rng.int(-maxRot, maxRot);
  const noiseLevel = rng.range(nLo, nHi);
  const noise = smoothField(rng);
  const occluded = new Uint8Array(RINGS * ANGLES);
  if (options.occlusion ?? true) {
    // Upper eyelid centred near 90° (column 32), lower near 270° (column 96): an arc whose depth in
    // rings (from the outermost) falls off with the angular distance from its centre.
    const lids: Array<[number, number, number]> = [
      [32 + rng.int(-6, 6), rng.range(0, 30), rng.range(2, 7)],
      [96 + rng.int(-6, 6), rng.range(0, 20), rng.range(1, 5)],
    ];
    for (const [centre, halfWidth, depth] of lids) {
      for (let a = 0; a < ANGLES; a++) {
        const d = Math.min(Math.abs(a - centre), ANGLES - Math.abs(a - centre));
        if (d > halfWidth) continue;
        const rings = Math.round(depth * Math.sqrt(1 - (d / (halfWidth + 1)) ** 2));
        for (let r = RINGS - rings; r < RINGS; r++) occluded[r * ANGLES + a] = 1;
      }
    }
    const spots = rng.int(0, 2);
    for (let i = 0; i < spots; i++) {
      const a0 = rng.int(0, ANGLES - 1);
      const r0 = rng.int(0, RINGS - 2);
      for (let da = 0; da < 3; da++) for (let dr = 0; dr < 2; dr++) occluded[(r0 + dr) * ANGLES + ((a0 + da) % ANGLES)] = 1;
    }
  }
  const garbage = new Uint8Array(FIELD);
  for (let i = 0; i < FIELD; i++) garbage[i] = rng.next() < 0.5 ? 1 : 0;
  let valid = 0;
  for (const o of occluded) if (!o) valid++;
  const quality = Math.max(0, Math.min(100, Math.round(100 * (valid / occluded.length) * (1 - 0.5 * noiseLevel))));
  const code = createIrisCode(
    (ring, angle, k) => {
      if (occluded[ring * ANGLES + angle]) return garbage[(k * RINGS + ring) * ANGLES + angle]!;
      const src = (((angle - rotation) % ANGLES) + ANGLES) % ANGLES;
      const i = (k * RINGS + ring) * ANGLES + src;
      return eye.field[i]! + noiseLevel * noise[i]! > 0;
    },
    (ring, angle) => !occluded[ring * ANGLES + angle],
    quality,
  );
  return { code, rotation };
}
