/**
 * Extraction off the main event loop: one worker thread that owns the ONNX sessions and runs the
 * pipelines (a fingerprint takes tens of milliseconds of CPU, too long to block MQTT keep-alives
 * and the punch feedback). Requests are answered in order; `close()` ends the thread.
 */
import { Worker } from 'node:worker_threads';
import { AgentError } from '../../core/errors.js';
import type { ExtractRequest, ExtractResult } from './extract-image.js';

interface Pending { resolve: (r: ExtractResult) => void; reject: (e: unknown) => void }

export class Extractor {
  private worker: Worker | undefined;
  private nextId = 1;
  private pending = new Map<number, Pending>();

  constructor(private readonly options: { inferenceThreads?: number } = {}) {}

  private start(): Worker {
    if (this.worker) return this.worker;
    const ts = import.meta.url.endsWith('.ts');
    const url = new URL(ts ? './extract-worker.ts' : './extract-worker.js', import.meta.url);
    // From TypeScript sources (tsx, vitest) the worker needs tsx's loader too.
    const w = new Worker(url, ts ? { execArgv: ['--import', 'tsx'] } : {});
    w.on('message', (m: { id: number; result?: ExtractResult; error?: { code: string; message: string; hint?: string; retryable?: boolean; context: Record<string, unknown> } }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.result) p.resolve({ ...m.result, template: new Uint8Array(m.result.template) });
      else {
        const e = m.error!;
        p.reject(new AgentError(e.code, e.message, e.context, { ...(e.hint ? { hint: e.hint } : {}), retryable: e.retryable ?? false }));
      }
    });
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
    const e = new AgentError('BIOMETRICS_EXTRACT_FAILED', `the extraction worker failed: ${(err as Error).message ?? String(err)}`, {}, { hint: 'the next request starts a new worker; if it keeps failing, check the models in models/', retryable: true, cause: err });
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
    }).finally(() => { if (this.pending.size === 0) this.worker?.unref(); });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}
