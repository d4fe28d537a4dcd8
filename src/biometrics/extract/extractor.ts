/**
 * The agent's one entry point to image extraction:
 *
 *   const extractor = await createImageExtractor();
 *   const { format, data, quality } = await extractor.extract('finger', { width, height, pixels, dpi });
 *   await extractor.close();
 *
 * Extraction is CPU-bound (a fingerprint takes tens of milliseconds of TypeScript around the ONNX
 * call), so by default it runs in one worker thread that keeps its ONNX sessions for its whole
 * life; the event loop that drives scanners, the outbox and MQTT never waits on it. Requests are
 * served one at a time in arrival order. `{ worker: false }` runs in the calling thread (CLI,
 * tests). A worker that dies is replaced on the next request; its pending requests fail with
 * BIOMETRICS_EXTRACT_FAILED.
 */
import { Worker } from 'node:worker_threads';
import { AgentError } from '../../core/errors.js';
import { assertGrayImage } from '../image/gray-image.js';
import { extractImage, type ExtractedTemplate, type ExtractInput, type Modality } from './extract-image.js';
import type { ExtractReply, ExtractRequest } from './extract-worker.js';
import { FINGER_MODEL } from './finger-pipeline.js';
import { IRIS_MODEL } from './iris-encode.js';
import { getSession, releaseSessions } from './onnx-sessions.js';

export type { ExtractedTemplate, ExtractInput, Modality };

export interface ImageExtractorOptions {
  /** Run extractions in a worker thread (default true). */
  worker?: boolean;
}

export interface ImageExtractor {
  extract(modality: Modality, image: ExtractInput): Promise<ExtractedTemplate>;
  close(): Promise<void>;
}

function spawnExtractWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./extract-worker.js', import.meta.url));
  // Run from the sources (tsx, vitest): the worker registers tsx before importing the .ts file.
  const url = new URL('./extract-worker.ts', import.meta.url).href;
  const source = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(source, { eval: true });
}

function checkRequest(modality: Modality, image: ExtractInput): void {
  if (modality !== 'finger' && modality !== 'iris') {
    throw new AgentError('BIOMETRICS_BAD_MODALITY', `cannot extract a template for modality '${String(modality)}'`, { modality }, { hint: "use 'finger' or 'iris'" });
  }
  assertGrayImage(image, `${modality} image`);
}

class InlineExtractor implements ImageExtractor {
  async extract(modality: Modality, image: ExtractInput): Promise<ExtractedTemplate> {
    checkRequest(modality, image);
    return extractImage(modality, image);
  }
  async close(): Promise<void> {
    await releaseSessions();
  }
}

class WorkerExtractor implements ImageExtractor {
  #worker: Worker | null = null;
  #seq = 0;
  #pending = new Map<number, { resolve: (r: ExtractedTemplate) => void; reject: (e: Error) => void }>();
  #closed = false;

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const w = spawnExtractWorker();
    w.on('message', (m: ExtractReply) => {
      const p = this.#pending.get(m.seq);
      if (!p) return;
      this.#pending.delete(m.seq);
      if ('error' in m) {
        p.reject(new AgentError(m.error.code, m.error.message, m.error.context, { ...(m.error.hint ? { hint: m.error.hint } : {}), retryable: m.error.retryable }));
      } else {
        p.resolve({ format: m.format, data: new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength), quality: m.quality });
      }
    });
    const fail = (why: string, cause?: unknown): void => {
      if (this.#worker === w) this.#worker = null;
      const err = new AgentError('BIOMETRICS_EXTRACT_FAILED', `the extraction worker stopped: ${why}`, {}, { hint: 'capture again; if it keeps failing, check the models in models/ (npm run models)', retryable: true, cause });
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    };
    w.on('error', (err) => fail(err.message, err));
    w.on('exit', (code) => { if (!this.#closed) fail(`exit code ${code}`); });
    w.unref();
    this.#worker = w;
    return w;
  }

  extract(modality: Modality, image: ExtractInput): Promise<ExtractedTemplate> {
    if (this.#closed) return Promise.reject(new AgentError('BIOMETRICS_EXTRACTOR_CLOSED', 'the image extractor is closed', {}, { hint: 'create a new extractor' }));
    try {
      checkRequest(modality, image);
    } catch (err) {
      return Promise.reject(err);
    }
    const w = this.#start();
    const seq = ++this.#seq;
    // The pixels are copied once so the caller keeps its buffer and the copy moves without another copy.
    const pixels = image.pixels.slice();
    const req: ExtractRequest = { seq, modality, image: { width: image.width, height: image.height, pixels, ...(image.dpi !== undefined ? { dpi: image.dpi } : {}) } };
    return new Promise<ExtractedTemplate>((resolve, reject) => {
      this.#pending.set(seq, { resolve, reject });
      if (this.#pending.size === 1) w.ref();
      w.postMessage(req, [pixels.buffer as ArrayBuffer]);
    }).finally(() => {
      if (this.#pending.size === 0) this.#worker?.unref();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const w = this.#worker;
    this.#worker = null;
    for (const p of this.#pending.values()) p.reject(new AgentError('BIOMETRICS_EXTRACTOR_CLOSED', 'the image extractor was closed during an extraction', {}, { hint: 'capture again' }));
    this.#pending.clear();
    if (w) await w.terminate();
  }
}

/**
 * Creates the extractor. The bundled models are checked (loaded once) before it is returned, so a
 * missing or damaged model is reported at start-up rather than at the first punch.
 */
export async function createImageExtractor(options: ImageExtractorOptions = {}): Promise<ImageExtractor> {
  await Promise.all([getSession(FINGER_MODEL), getSession(IRIS_MODEL.file)]);
  if (options.worker === false) return new InlineExtractor();
  await releaseSessions();
  return new WorkerExtractor();
}
