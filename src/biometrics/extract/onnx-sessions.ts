/**
 * ONNX Runtime sessions, created once per model file and reused for every extraction (a session
 * costs milliseconds to create and megabytes to hold). The bundled models live in models/ at the
 * package root (model-path.ts finds them in the source tree and in dist/).
 *
 * Tested in test/unit/models/models.test.ts (a session of the bundled Gabor bank run on a ridge
 * pattern) and test/unit/biometrics/extract/extractor.test.ts.
 */
import { existsSync } from 'node:fs';
import * as ort from 'onnxruntime-node';
import { modelPath } from './model-path.js';
import { AgentError } from '../../core/errors.js';

const sessions = new Map<string, Promise<ort.InferenceSession>>();

/** Threads one inference may use (default 1: the terminal runs other work too). */
let intraOpThreads = 1;

export function setInferenceThreads(n: number): void {
  intraOpThreads = Math.max(1, Math.floor(n));
}

/** The session of a model, created on first use and shared afterwards. */
export function getSession(file: string): Promise<ort.InferenceSession> {
  const path = modelPath(file);
  let s = sessions.get(path);
  if (!s) {
    if (!existsSync(path)) {
      throw new AgentError(
        'BIOMETRICS_MODEL_MISSING',
        `model file ${path} does not exist`,
        { path },
        { hint: 'run `npm run models` to build the bundled models, or fix the model path in the configuration' },
      );
    }
    s = ort.InferenceSession.create(path, { intraOpNumThreads: intraOpThreads, interOpNumThreads: 1, graphOptimizationLevel: 'all' }).catch(
      (err: unknown) => {
        sessions.delete(path);
        throw new AgentError(
          'BIOMETRICS_MODEL_INVALID',
          `cannot load model ${path}: ${(err as Error).message}`,
          { path },
          { hint: 'rebuild it with `npm run models` or replace the file with a valid ONNX model', cause: err },
        );
      },
    );
    sessions.set(path, s);
  }
  return s;
}

/** How many sessions are open (for tests and metrics). */
export function openSessionCount(): number {
  return sessions.size;
}

/** Releases every session (tests, shutdown). */
export async function releaseSessions(): Promise<void> {
  const all = [...sessions.values()];
  sessions.clear();
  for (const s of all) await (await s.catch(() => undefined))?.release();
}

export { ort };
