/**
 * Every model of models/, by file name, with the function that builds its bytes. The build
 * script writes them; a test rebuilds them in memory and compares with the committed files.
 */
import { buildEmbeddingTiny } from './embedding-tiny.js';
import { buildFingerGaborBank } from './finger-gabor-bank.js';
import { buildIrisGaborEncoder } from './iris-gabor-encoder.js';

export const MODELS: Record<string, () => Uint8Array> = {
  'finger-gabor-bank.onnx': buildFingerGaborBank,
  'iris-gabor-encoder.onnx': buildIrisGaborEncoder,
  'embedding-tiny.onnx': buildEmbeddingTiny,
};
