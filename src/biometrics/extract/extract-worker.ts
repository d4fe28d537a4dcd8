/**
 * Worker-thread side of `Extractor`: runs `extractTemplate` off the main event loop. The ONNX
 * sessions live in this thread and are reused for every request.
 *
 * Tested in test/unit/biometrics/extract/extractor.test.ts (extraction in its worker thread gives
 * the same bytes as in-process; refusals come back as AgentErrors).
 */
import { parentPort } from 'node:worker_threads';
import { isAgentError } from '../../core/errors.js';
import { extractTemplate, type ExtractRequest } from './extract-image.js';
import { FINGER_MODEL, IRIS_MODEL } from './model-path.js';
import { getSession, setInferenceThreads } from './onnx-sessions.js';

/** `warm`: load both bundled models now (at start-up) rather than at the first capture. */
interface Message {
  id: number;
  req?: ExtractRequest;
  threads?: number;
  warm?: boolean;
}

const fail = (err: unknown) =>
  isAgentError(err) ? err.toJSON() : { code: 'BIOMETRICS_EXTRACT_FAILED', message: (err as Error).message ?? String(err), context: {} };

parentPort!.on('message', (msg: Message) => {
  if (msg.threads !== undefined) {
    setInferenceThreads(msg.threads);
    return;
  }
  if (msg.warm) {
    Promise.all([getSession(FINGER_MODEL), getSession(IRIS_MODEL)]).then(
      () => parentPort!.postMessage({ id: msg.id, warmed: true }),
      (err: unknown) => parentPort!.postMessage({ id: msg.id, error: fail(err) }),
    );
    return;
  }
  extractTemplate(msg.req!).then(
    (result) => parentPort!.postMessage({ id: msg.id, result }, [result.template.buffer as ArrayBuffer]),
    (err: unknown) => parentPort!.postMessage({ id: msg.id, error: fail(err) }),
  );
});
