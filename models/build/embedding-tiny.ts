/**
 * embedding-tiny: a small fixed-weight image → 16-vector model, the test fixture of the embedding
 * slot (any ONNX model mapping an image to a vector can take its place).
 *
 *   input     [1, 1, 32, 32] float (normalized by the slot's mean/std)
 *   -> embedding [1, 16]
 *
 * Conv 8×5×5 stride 2 → Relu → AveragePool 4 → Flatten (128) → MatMul 128×16. The weights are
 * seeded pseudo-random numbers: the model is not trained, only deterministic and
 * input-sensitive, which is what the slot's tests need.
 */
import { SeededRandom } from '../../src/biometrics/image/seeded-random.js';
import { encodeModel, floatTensor, floatValue, intsAttr } from './onnx-builder.js';

export function buildEmbeddingTiny(): Uint8Array {
  const rnd = new SeededRandom(0xe3b);
  const conv = new Float32Array(8 * 25).map(() => rnd.gauss() / 5);
  const bias = new Float32Array(8).map(() => rnd.gauss() * 0.05);
  const proj = new Float32Array(128 * 16).map(() => rnd.gauss() / Math.sqrt(128));
  return encodeModel({
    name: 'embedding-tiny',
    doc: 'Fixture for the embedding slot: 32x32 gray -> 16-d vector (seeded, untrained weights).',
    nodes: [
      {
        name: 'conv',
        opType: 'Conv',
        input: ['input', 'conv_w', 'conv_b'],
        output: ['c1'],
        attribute: [intsAttr('kernel_shape', [5, 5]), intsAttr('strides', [2, 2]), intsAttr('pads', [2, 2, 2, 2])],
      },
      { name: 'relu', opType: 'Relu', input: ['c1'], output: ['r1'] },
      {
        name: 'pool',
        opType: 'AveragePool',
        input: ['r1'],
        output: ['p1'],
        attribute: [intsAttr('kernel_shape', [4, 4]), intsAttr('strides', [4, 4])],
      },
      { name: 'flat', opType: 'Flatten', input: ['p1'], output: ['f1'] },
      { name: 'proj', opType: 'MatMul', input: ['f1', 'proj_w'], output: ['embedding'] },
    ],
    initializers: [floatTensor('conv_w', [8, 1, 5, 5], conv), floatTensor('conv_b', [8], bias), floatTensor('proj_w', [128, 16], proj)],
    inputs: [floatValue('input', [1, 1, 32, 32])],
    outputs: [floatValue('embedding', [1, 16])],
  });
}
