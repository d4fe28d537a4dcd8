/**
 * `npm run models`: builds every model of models/ (the list in models.ts) and writes the .onnx
 * files next to this folder. Deterministic: running it twice gives the same bytes, and
 * test/unit/models/ checks the committed files against a rebuild.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODELS } from './models.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const [file, build] of Object.entries(MODELS)) {
  const bytes = build();
  writeFileSync(join(dir, file), bytes);
  process.stdout.write(`${file}: ${bytes.length} bytes\n`);
}
