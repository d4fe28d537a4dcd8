/**
 * finger-gabor-bank: oriented, frequency-tuned Gabor filter bank for fingerprint ridge
 * enhancement with per-pixel selection.
 *
 *   image   [1, 1, H, W]  float, gray 0..1 with the local mean removed (ridges positive)
 *   select  [1, K, H, W]  float, per-pixel weights of the K filters (from the orientation and
 *                         frequency maps; at most 4 non-zero per pixel: bilinear in orientation ×
 *                         frequency)
 *   -> enhanced [1, 1, H, W] = Σ_k select_k · (image ∗ g_k)
 *
 * g_k (k = f·ORIENTATIONS + o) is an even Gabor filter whose carrier runs across ridges of
 * orientation θ_o = o·π/ORIENTATIONS (ridge direction, image coordinates, y down) at period
 * PERIODS[f], with an isotropic Gaussian envelope, zero mean, unit gain at its own frequency.
 */
import { encodeModel, floatTensor, floatValue, intAttr, intsAttr } from './onnx-builder.js';

export const FINGER_GABOR = {
  orientations: 16,
  periods: [7.5, 10] as const,
  size: 15,
  sigma: 3.6,
};

export function fingerGaborKernels(): Float32Array {
  const { orientations, periods, size, sigma } = FINGER_GABOR;
  const K = orientations * periods.length;
  const half = (size - 1) / 2;
  const w = new Float32Array(K * size * size);
  for (let f = 0; f < periods.length; f++) {
    const freq = (2 * Math.PI) / periods[f]!;
    for (let o = 0; o < orientations; o++) {
      const theta = (o * Math.PI) / orientations;
      // Unit normal to the ridges.
      const nx = -Math.sin(theta),
        ny = Math.cos(theta);
      const k = f * orientations + o;
      const base = k * size * size;
      let mean = 0,
        env = 0;
      for (let y = -half; y <= half; y++) {
        for (let x = -half; x <= half; x++) {
          const g = Math.exp(-(x * x + y * y) / (2 * sigma * sigma));
          mean += g * Math.cos(freq * (x * nx + y * ny));
          env += g;
        }
      }
      mean /= env;
      let gain = 0;
      for (let y = -half; y <= half; y++) {
        for (let x = -half; x <= half; x++) {
          const g = Math.exp(-(x * x + y * y) / (2 * sigma * sigma));
          const v = g * (Math.cos(freq * (x * nx + y * ny)) - mean);
          w[base + (y + half) * size + (x + half)] = v;
          gain += v * Math.cos(freq * (x * nx + y * ny));
        }
      }
      for (let i = 0; i < size * size; i++) w[base + i] = w[base + i]! / gain;
    }
  }
  return w;
}

export function buildFingerGaborBank(): Uint8Array {
  const { orientations, periods, size } = FINGER_GABOR;
  const K = orientations * periods.length;
  const half = (size - 1) / 2;
  return encodeModel({
    name: 'finger-gabor-bank',
    doc: `Fingerprint ridge enhancement: ${orientations} orientations x periods ${periods.join('/')} px Gabor bank (${size}x${size}), per-pixel selection by weights, summed.`,
    nodes: [
      {
        name: 'bank',
        opType: 'Conv',
        input: ['image', 'gabor_weights'],
        output: ['responses'],
        attribute: [intsAttr('kernel_shape', [size, size]), intsAttr('pads', [half, half, half, half])],
      },
      { name: 'select', opType: 'Mul', input: ['responses', 'select'], output: ['selected'] },
      { name: 'sum', opType: 'ReduceSum', input: ['selected', 'sum_axes'], output: ['enhanced'], attribute: [intAttr('keepdims', 1)] },
    ],
    initializers: [
      floatTensor('gabor_weights', [K, 1, size, size], fingerGaborKernels()),
      { name: 'sum_axes', dims: [1], dataType: 7, int64Data: [1] },
    ],
    inputs: [floatValue('image', [1, 1, 'H', 'W']), floatValue('select', [1, K, 'H', 'W'])],
    outputs: [floatValue('enhanced', [1, 1, 'H', 'W'])],
  });
}
