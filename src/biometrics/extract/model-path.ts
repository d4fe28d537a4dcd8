/**
 * Where the bundled ONNX models are, without loading the ONNX runtime: the agent's main thread
 * checks the files and hands the work to the extraction worker, so only the worker loads
 * onnxruntime (some 16 MB of a terminal's memory, once).
 *
 * Tested in test/unit/biometrics/extract/extractor.test.ts and test/unit/models/models.test.ts (the
 * bundled models found and loaded).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FINGER_MODEL = 'finger-gabor-bank.onnx';
export const IRIS_MODEL = 'iris-gabor-encoder.onnx';

/** The absolute path of a bundled model (a file name in models/), or `file` itself when absolute. */
export function modelPath(file: string): string {
  if (isAbsolute(file)) return file;
  for (const up of ['../../../models/', '../../../../models/']) {
    const p = resolve(fileURLToPath(new URL(up, import.meta.url)), file);
    if (existsSync(p)) return p;
  }
  return resolve(fileURLToPath(new URL('../../../models/', import.meta.url)), file);
}
