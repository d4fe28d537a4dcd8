/**
 * Worker thread of the image extractor: holds its own ONNX sessions (created on first use, kept
 * for the worker's life) and answers one extraction request at a time. Errors go back as plain
 * objects with the AgentError's fields.
 */
import { parentPort } from 'node:worker_threads';
import { AgentError } from '../../core/errors.js';
import { extractImage, type ExtractInput, type Modality } from './extract-image.js';

export interface ExtractRequest {
  seq: number;
  modality: Modality;
  image: ExtractInput;
}

export type ExtractReply =
  | { seq: number; format: 'iso19794-2' | 'iris-code-v1'; data: Uint8Array; quality: number }
  | { seq: number; error: { code: string; message: string; context: Record<string, unknown>; hint?: string; retryable: boolean } };

const port = parentPort;
if (port) {
  port.on('message', (m: ExtractRequest) => {
    extractImage(m.modality, m.image).then(
      (r) => port.postMessage({ seq: m.seq, ...r } satisfies ExtractReply, [r.data.buffer as ArrayBuffer]),
      (err: unknown) => {
        const e = err instanceof AgentError ? err : new AgentError('BIOMETRICS_EXTRACT_FAILED', err instanceof Error ? err.message : String(err));
        port.postMessage({ seq: m.seq, error: { code: e.code, message: e.message, context: e.context, ...(e.hint ? { hint: e.hint } : {}), retryable: e.retryable } } satisfies ExtractReply);
      },
    );
  });
}
