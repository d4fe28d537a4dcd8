/**
 * Extraction off the main event loop: one worker thread that owns the ONNX sessions and runs the
 * pipelines (a fingerprint takes tens of milliseconds of CPU, too long to block MQTT keep-alives
 * and the punch feedback). Requests are answered in order; `close()` ends the thread.
 */
import { startWorker } from '../worker.js';
import { existsSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { AgentError, isErrorCode } from '../../core/errors.js';
import { assertGrayImage, type GrayImage } from '../image/gray-image.js';
import type { BiometricModality } from '../../core/modality.js';
import type { ExtractRequest, ExtractResult } from './extract-image.js';
// Only the model files here: the pipelines and the ONNX runtime load in the worker (or, without
// one, on first use below), never in the agent's main thread.
import { FINGER_MODEL, IRIS_MODEL, modelPath } from './model-path.js';

interface Pending {
  resolve: (r: ExtractResult) => void;
  reject: (e: unknown) => void;
}

export class Extractor {
  private worker: Worker | undefined;
  private nextId = 1;
  private pending = new Map<number, Pending>();

  constructor(private readonly options: { inferenceThreads?: number } = {}) {}

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(import.meta.url, './extract-worker');
    w.on(
      'message',
      (m: {
        id: number;
        result?: ExtractResult;
        error?: { code: string; message: string; hint?: string; retryable?: boolean; context: Record<string, unknown> };
      }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.result) p.resolve({ ...m.result, template: new Uint8Array(m.result.template) });
        else if (!m.error)
          p.resolve(undefined as unknown as ExtractResult); // a warm-up's answer
        else {
          const e = m.error;
          p.reject(
            new AgentError(isErrorCode(e.code) ? e.code : 'INTERNAL', e.message, e.context, {
              ...(e.hint ? { hint: e.hint } : {}),
              retryable: e.retryable ?? false,
            }),
          );
        }
      },
    );
    w.on('error', (err) => this.failAll(err));
    w.on('exit', (code) => {
      this.worker = undefined;
      if (this.pending.size) this.failAll(new Error(`extraction worker exited with code ${code}`));
    });
    w.unref();
    if (this.options.inferenceThreads !== undefined) w.postMessage({ id: 0, threads: this.options.inferenceThreads });
    this.worker = w;
    return w;
  }

  private failAll(err: unknown): void {
    const e = new AgentError(
      'BIOMETRICS_EXTRACT_FAILED',
      `the extraction worker failed: ${(err as Error).message ?? String(err)}`,
      {},
      { hint: 'the next request starts a new worker; if it keeps failing, check the models in models/', retryable: true, cause: err },
    );
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  extract(req: ExtractRequest): Promise<ExtractResult> {
    const w = this.start();
    const id = this.nextId++;
    return new Promise<ExtractResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) w.ref();
      w.postMessage({ id, req });
    }).finally(() => {
      if (this.pending.size === 0) this.worker?.unref();
    });
  }

  /** Starts the worker and loads the bundled models in it; rejects when a model cannot be loaded. */
  async warm(): Promise<void> {
    const w = this.start();
    const id = this.nextId++;
    await new Promise<ExtractResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) w.ref();
      w.postMessage({ id, warm: true });
    }).finally(() => {
      if (this.pending.size === 0) this.worker?.unref();
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}

/**
 * The agent's entry point (src/terminal/engines.ts uses exactly this):
 *
 *   const extractor = await createImageExtractor();
 *   const { format, data, quality } = await extractor.extract('finger', { width, height, pixels, dpi });
 *
 * By default the extractions run in the worker thread of `Extractor`; `{ worker: false }` runs
 * them in the calling thread (CLI, tests). The bundled models are checked before it is returned,
 * so a missing model is reported at start-up rather than at the first punch.
 */
export interface ImageExtractorOptions {
  /** Run extractions in a worker thread (default true). */
  worker?: boolean;
  /** ONNX intra-op threads in the worker (default 1). */
  inferenceThreads?: number;
}

export interface ExtractedTemplate {
  format: 'iso19794-2' | 'iris-code-v1';
  data: Uint8Array;
  /** 0..100. */
  quality: number;
}

export interface ImageExtractor {
  extract(modality: BiometricModality, image: GrayImage & { dpi?: number }): Promise<ExtractedTemplate>;
  close(): Promise<void>;
}

export async function createImageExtractor(options: ImageExtractorOptions = {}): Promise<ImageExtractor> {
  for (const file of [FINGER_MODEL, IRIS_MODEL]) {
    const path = modelPath(file);
    if (!existsSync(path)) {
      throw new AgentError(
        'BIOMETRICS_MODEL_MISSING',
        `model file ${path} does not exist`,
        { path },
        { hint: 'run `npm run models` to build the bundled models' },
      );
    }
  }
  const worker =
    options.worker === false
      ? null
      : new Extractor(options.inferenceThreads !== undefined ? { inferenceThreads: options.inferenceThreads } : {});
  // Load the models now, where they will run, so a damaged model shows at start-up and the first
  // capture does not pay for the sessions.
  if (worker) {
    try {
      await worker.warm();
    } catch (err) {
      await worker.close();
      throw err;
    }
  } else {
    const { getSession } = await import('./onnx-sessions.js');
    await Promise.all([getSession(FINGER_MODEL), getSession(IRIS_MODEL)]);
  }
  const inThread = worker ? null : await import('./extract-image.js');
  let closed = false;
  return {
    async extract(modality, image) {
      if (closed)
        throw new AgentError('BIOMETRICS_EXTRACTOR_CLOSED', 'the image extractor is closed', {}, { hint: 'create a new extractor' });
      if (modality !== 'finger' && modality !== 'iris') {
        throw new AgentError(
          'BIOMETRICS_BAD_MODALITY',
          `cannot extract a template for modality '${String(modality)}'`,
          { modality },
          { hint: "use 'finger' or 'iris'" },
        );
      }
      assertGrayImage(image, `${modality} image`);
      const req: ExtractRequest = {
        modality,
        image: { width: image.width, height: image.height, pixels: image.pixels },
        ...(image.dpi !== undefined ? { finger: { dpi: image.dpi } } : {}),
      };
      const r = worker ? await worker.extract(req) : await inThread!.extractTemplate(req);
      return { format: r.modality === 'finger' ? 'iso19794-2' : 'iris-code-v1', data: r.template, quality: r.quality };
    },
    async close() {
      closed = true;
      await worker?.close();
    },
  };
}
