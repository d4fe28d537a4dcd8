/**
 * `npm run models`: builds every model of models/ from its TypeScript definition and writes the
 * .onnx files next to this folder. Deterministic: running it twice gives the same bytes, and
 * test/unit/models/ checks the committed files against a rebuild.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildEmbeddingTiny } from './embedding-tiny.js';
import { buildFingerGaborBank } from './finger-gabor-bank.js';
import { buildIrisGaborEncoder } from './iris-gabor-encoder.js';

export const MODELS: ReadonlyArray<{ file: string; build: () => Uint8Array }> = [
  { file: 'finger-gabor-bank.onnx', build: buildFingerGaborBank },
  { file: 'iris-gabor-encoder.onnx', build: buildIrisGaborEncoder },
  { file: 'embedding-tiny.onnx', build: buildEmbeddingTiny },
];

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..');
  for (const m of MODELS) {
    const bytes = m.build();
    writeFileSync(join(dir, m.file), bytes);
    process.stdout.write(`${m.file}: ${bytes.length} bytes\n`);
  }
}
