/**
 * A cache of extraction results for benchmarks that extract the same images run after run
 * (bench:identify): one small JSON file per image in a temporary folder, keyed by the SHA-256 of
 * the image's bytes, the resolution it is extracted at and the source of the extraction pipeline
 * (src/biometrics/extract, src/biometrics/image and the finger template's code), so a change to the
 * pipeline never reads an old result. A failure is cached as well (the same image fails the same way).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type CachedExtraction = { bytes: Uint8Array; quality: number; dpiSource: string } | { failure: string };

const SRC = fileURLToPath(new URL('../../src/biometrics/', import.meta.url));
const PIPELINE = ['extract', 'image'];
const TEMPLATE_FILES = ['finger/template.ts', 'finger/iso19794-2.ts'];

/** SHA-256 over the extraction pipeline's source files (names and contents). */
function pipelineHash(): string {
  const h = createHash('sha256');
  const files = [
    ...PIPELINE.flatMap((d) =>
      readdirSync(join(SRC, d))
        .sort()
        .map((f) => `${d}/${f}`),
    ),
    ...TEMPLATE_FILES,
  ];
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(readFileSync(join(SRC, f)))
      .update('\0');
  return h.digest('hex');
}

export class ExtractionCache {
  readonly dir: string;
  hits = 0;
  misses = 0;
  private readonly pipeline = pipelineHash();

  constructor(dir = join(tmpdir(), 'edge-agent-bench-extractions')) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
  }

  private file(image: Uint8Array, dpi: number | undefined): string {
    const key = createHash('sha256')
      .update(this.pipeline)
      .update(`\0${dpi ?? 'image'}\0`)
      .update(image)
      .digest('hex');
    return join(this.dir, `${key}.json`);
  }

  /** The cached result, else `extract()`'s (stored for the next run). */
  async get(image: Uint8Array, dpi: number | undefined, extract: () => Promise<CachedExtraction>): Promise<CachedExtraction> {
    const file = this.file(image, dpi);
    try {
      const row = JSON.parse(readFileSync(file, 'utf8')) as { template?: string; quality?: number; dpiSource?: string; failure?: string };
      this.hits++;
      if (row.failure !== undefined) return { failure: row.failure };
      return { bytes: new Uint8Array(Buffer.from(row.template!, 'base64')), quality: row.quality!, dpiSource: row.dpiSource! };
    } catch {
      // not cached yet (or unreadable): extract
    }
    this.misses++;
    const r = await extract();
    const row =
      'failure' in r
        ? { failure: r.failure }
        : { template: Buffer.from(r.bytes).toString('base64'), quality: r.quality, dpiSource: r.dpiSource };
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(row), { mode: 0o600 });
    renameSync(tmp, file);
    return r;
  }
}
