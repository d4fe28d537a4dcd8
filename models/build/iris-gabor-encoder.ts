/**
 * iris-gabor-encoder: complex Gabor filtering of a normalized (rubber-sheet) iris strip, sampled
 * on the iris code's 8 rings × 128 angles.
 *
 *   strip    [1, 1, 32, 256] float, ρ (pupil → limbus) × θ (0..2π), zero mean, unit variance
 *   -> response [1, 2, 8, 128]  channel 0 real (even), 1 imaginary (odd) part; the code's bits are
 *               their signs
 *
 * The strip is padded circularly in θ inside the graph (Slice + Concat), so the angular wrap is
 * seamless; the Conv has stride 4 in ρ and 2 in θ.
 */
import { encodeModel, floatTensor, floatValue, intsAttr } from './onnx-builder.js';

export const IRIS_GABOR = {
  rows: 32,
  cols: 256,
  rings: 8,
  angles: 128,
  /** Angular wavelength in strip pixels and the envelope. */
  wavelength: 16,
  sigmaT: 5,
  sigmaR: 1.5,
  kh: 7,
  kw: 25,
};

export function irisGaborKernels(): Float32Array {
  const { wavelength, sigmaT, sigmaR, kh, kw } = IRIS_GABOR;
  const w = new Float32Array(2 * kh * kw);
  const hh = (kh - 1) / 2,
    hw = (kw - 1) / 2;
  for (let part = 0; part < 2; part++) {
    let mean = 0,
      env = 0;
    for (let r = -hh; r <= hh; r++)
      for (let t = -hw; t <= hw; t++) {
        const g = Math.exp(-(r * r) / (2 * sigmaR * sigmaR) - (t * t) / (2 * sigmaT * sigmaT));
        const c = part === 0 ? Math.cos((2 * Math.PI * t) / wavelength) : Math.sin((2 * Math.PI * t) / wavelength);
        mean += g * c;
        env += g;
      }
    mean /= env;
    let norm = 0;
    for (let r = -hh; r <= hh; r++)
      for (let t = -hw; t <= hw; t++) {
        const g = Math.exp(-(r * r) / (2 * sigmaR * sigmaR) - (t * t) / (2 * sigmaT * sigmaT));
        const c = part === 0 ? Math.cos((2 * Math.PI * t) / wavelength) : Math.sin((2 * Math.PI * t) / wavelength);
        const v = g * (c - mean);
        w[part * kh * kw + (r + hh) * kw + (t + hw)] = v;
        norm += v * v;
      }
    const s = 1 / Math.sqrt(norm);
    for (let i = 0; i < kh * kw; i++) w[part * kh * kw + i] = w[part * kh * kw + i]! * s;
  }
  return w;
}

export function buildIrisGaborEncoder(): Uint8Array {
  const { rows, cols, rings, angles, kh, kw } = IRIS_GABOR;
  const pad = (kw - 1) / 2;
  const hh = (kh - 1) / 2;
  const i64 = (name: string, v: number[]) => ({ name, dims: [v.length], dataType: 7, int64Data: v });
  return encodeModel({
    name: 'iris-gabor-encoder',
    doc: `Iris strip ${rows}x${cols} -> complex Gabor response ${rings} rings x ${angles} angles (circular in theta).`,
    nodes: [
      { name: 'tail', opType: 'Slice', input: ['strip', 'tail_start', 'tail_end', 'axis3'], output: ['tail'] },
      { name: 'head', opType: 'Slice', input: ['strip', 'head_start', 'head_end', 'axis3'], output: ['head'] },
      {
        name: 'wrap',
        opType: 'Concat',
        input: ['tail', 'strip', 'head'],
        output: ['wrapped'],
        attribute: [{ name: 'axis', i: 3, type: 2 }],
      },
      {
        name: 'gabor',
        opType: 'Conv',
        input: ['wrapped', 'gabor_weights'],
        output: ['response'],
        attribute: [
          intsAttr('kernel_shape', [kh, kw]),
          intsAttr('strides', [rows / rings, cols / angles]),
          intsAttr('pads', [hh, 0, hh, 0]),
        ],
      },
    ],
    initializers: [
      floatTensor('gabor_weights', [2, 1, kh, kw], irisGaborKernels()),
      i64('tail_start', [cols - pad]),
      i64('tail_end', [cols]),
      i64('head_start', [0]),
      i64('head_end', [pad]),
      i64('axis3', [3]),
    ],
    inputs: [floatValue('strip', [1, 1, rows, cols])],
    outputs: [floatValue('response', [1, 2, rings, angles])],
  });
}
