/**
 * The embedding slot: any ONNX model that maps an image to a vector, configured by file path,
 * input size, normalization and tensor names, so a site can drop in a trained model without code
 * changes. Vectors are L2-normalized and matched 1:N by cosine similarity.
 */
import { AgentError } from '../../core/errors.js';
import type { GrayImage } from '../image/gray-image.js';
import { resize } from '../image/resample.js';
import type { ort } from './onnx-sessions.js';

export interface EmbeddingModelConfig {
  /** Path of the .onnx file (absolute, or a file name in models/). */
  modelPath: string;
  inputWidth: number;
  inputHeight: number;
  /** Input channels: 1 (gray) or 3 (the gray image repeated), NCHW. Default 1. */
  channels?: 1 | 3;
  /** Per-pixel normalization: (pixel/255 − mean) / std. Defaults 0 and 1. */
  mean?: number;
  std?: number;
  /** Tensor names; default the model's first input and first output. */
  inputName?: string;
  outputName?: string;
}

/**
 * The slot's settings from the agent configuration's `biometrics.embedding` block
 * (`{model, width, height, mean, std, inputName, outputName}`).
 */
export function embeddingModelConfig(c: {
  model: string;
  width: number;
  height: number;
  mean?: number;
  std?: number;
  inputName?: string | undefined;
  outputName?: string | undefined;
}): EmbeddingModelConfig {
  return {
    modelPath: c.model,
    inputWidth: c.width,
    inputHeight: c.height,
    mean: c.mean ?? 0,
    std: c.std ?? 1,
    ...(c.inputName ? { inputName: c.inputName } : {}),
    ...(c.outputName ? { outputName: c.outputName } : {}),
  };
}

/** The image's embedding, L2-normalized. */
export async function embedImage(img: GrayImage, cfg: EmbeddingModelConfig): Promise<Float32Array> {
  // The ONNX runtime loads on first use: a terminal without an embedding model never loads it here.
  const { getSession, ort } = await import('./onnx-sessions.js');
  const session = await getSession(cfg.modelPath);
  const inputName = cfg.inputName ?? session.inputNames[0]!;
  const outputName = cfg.outputName ?? session.outputNames[0]!;
  if (!session.inputNames.includes(inputName) || !session.outputNames.includes(outputName)) {
    throw new AgentError(
      'BIOMETRICS_MODEL_INVALID',
      `embedding model ${cfg.modelPath} has no input "${inputName}" or output "${outputName}"`,
      { inputs: session.inputNames, outputs: session.outputNames },
      { hint: 'set inputName/outputName to names the model has' },
    );
  }
  const c = cfg.channels ?? 1,
    w = cfg.inputWidth,
    h = cfg.inputHeight;
  const mean = cfg.mean ?? 0,
    std = cfg.std ?? 1;
  const small = resize(img, w, h);
  const data = new Float32Array(c * w * h);
  for (let ch = 0; ch < c; ch++) for (let i = 0; i < w * h; i++) data[ch * w * h + i] = (small.pixels[i]! / 255 - mean) / std;
  let out: ort.InferenceSession.OnnxValueMapType;
  try {
    out = await session.run({ [inputName]: new ort.Tensor('float32', data, [1, c, h, w]) });
  } catch (err) {
    throw new AgentError(
      'BIOMETRICS_MODEL_INVALID',
      `embedding model ${cfg.modelPath} refused a ${c}×${h}×${w} input: ${(err as Error).message}`,
      { inputWidth: w, inputHeight: h, channels: c },
      { hint: 'check inputWidth, inputHeight and channels against the model', cause: err },
    );
  }
  const t = out[outputName] as ort.Tensor;
  const v = Float32Array.from(t.data as Float32Array);
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw new AgentError(
      'BIOMETRICS_UNUSABLE_CAPTURE',
      'the embedding model returned a zero or non-finite vector',
      { reason: 'no-signal' },
      { hint: 'check the capture and the model normalization (mean/std)', retryable: true },
    );
  }
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length)
    throw new AgentError(
      'BIOMETRICS_TEMPLATE_INVALID',
      `embeddings of different lengths (${a.length} and ${b.length})`,
      { a: a.length, b: b.length },
      { hint: 're-enrol with the configured embedding model' },
    );
  let dot = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / (Math.sqrt(na * nb) || 1);
}

/** 1:N by cosine similarity over one contiguous Float32Array (rows of unit vectors). */
export class EmbeddingIndex {
  private data = new Float32Array(0);
  private ids: string[] = [];
  private slot = new Map<string, number>();
  constructor(readonly dimension: number) {}

  get size(): number {
    return this.ids.length;
  }

  add(id: string, v: Float32Array): void {
    if (v.length !== this.dimension)
      throw new AgentError(
        'BIOMETRICS_TEMPLATE_INVALID',
        `embedding of length ${v.length}, the index holds ${this.dimension}`,
        { id, length: v.length },
        { hint: 're-enrol with the configured embedding model' },
      );
    const norm = Math.hypot(...v) || 1;
    let s = this.slot.get(id);
    if (s === undefined) {
      s = this.ids.length;
      this.ids.push(id);
      this.slot.set(id, s);
      const next = new Float32Array(this.ids.length * this.dimension);
      next.set(this.data);
      this.data = next;
    }
    for (let i = 0; i < this.dimension; i++) this.data[s * this.dimension + i] = v[i]! / norm;
  }

  remove(id: string): boolean {
    const s = this.slot.get(id);
    if (s === undefined) return false;
    const last = this.ids.length - 1;
    if (s !== last) {
      this.data.copyWithin(s * this.dimension, last * this.dimension, (last + 1) * this.dimension);
      this.ids[s] = this.ids[last]!;
      this.slot.set(this.ids[s]!, s);
    }
    this.ids.pop();
    this.slot.delete(id);
    this.data = this.data.slice(0, this.ids.length * this.dimension);
    return true;
  }

  /** Entries with similarity ≥ threshold, best first (at most `limit`). */
  identify(probe: Float32Array, threshold = 0.8, limit = 5): Array<{ id: string; score: number }> {
    const d = this.dimension;
    const norm = Math.hypot(...probe) || 1;
    const res: Array<{ id: string; score: number }> = [];
    for (let s = 0; s < this.ids.length; s++) {
      let dot = 0;
      for (let i = 0; i < d; i++) dot += this.data[s * d + i]! * probe[i]!;
      const score = dot / norm;
      if (score >= threshold) res.push({ id: this.ids[s]!, score });
    }
    return res.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}
