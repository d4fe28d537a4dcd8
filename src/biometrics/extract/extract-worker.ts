/**
 * Worker-thread side of `Extractor`: runs `extractTemplate` off the main event loop. The ONNX
 * sessions live in this thread and are reused for every request.
 */
import { parentPort } from 'node:worker_threads';
import { isAgentError } from '../../core/errors.js';
import { extractTemplate, type ExtractRequest } from './extract-image.js';
import { setInferenceThreads } from './onnx-sessions.js';

interface Message { id: number; req?: ExtractRequest; threads?: number }

parentPort!.on('message', (msg: Message) => {
  if (msg.threads !== undefined) { setInferenceThreads(msg.threads); return; }
  extractTemplate(msg.req!).then(
    (result) => parentPort!.postMessage({ id: msg.id, result }, [result.template.buffer as ArrayBuffer]),
    (err: unknown) => parentPort!.postMessage({ id: msg.id, error: isAgentError(err) ? err.toJSON() : { code: 'BIOMETRICS_EXTRACT_FAILED', message: (err as Error).message ?? String(err), context: {} } }),
  );
});
