/**
 * The tests' build of the CLI: every module of src/ and drivers/ turned into JavaScript by
 * esbuild, one file to one file (no bundle, no type check: `npx tsc` does that), the same
 * transform tsx applies when it loads the sources, laid out as `npm run build` lays out dist/
 * (one folder below the checkout, so models/, package.json and the console's assets are found
 * the same way), in `.test-build/`.
 *
 * The children the tests start (`test/helpers/cli.ts`) run it with plain node instead of the
 * sources through tsx: tsx's loader hooks cost about half of each child's CPU (measured on
 * outbox-cli and template-cli: 0.48×), and the suite starts well over a thousand children.
 * Made once per run by the global setup, before any test file starts; a file is written only
 * when its text changed, and the output of a module that is gone is removed.
 * `EDGE_AGENT_TEST_CLI=sources` runs the children from the sources as before.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { buildSync } from 'esbuild';

export const TEST_BUILD_DIR = '.test-build';
/** The folders built; the console's page files are copied beside its modules. */
const SOURCES = ['src', 'drivers'];
const ASSETS = 'src/console/assets';

function filesUnder(root: string, dir: string, keep: (f: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(join(root, d))) return;
    for (const e of readdirSync(join(root, d), { withFileTypes: true })) {
      const rel = `${d}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (keep(rel)) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

/** Writes `text` to `file` unless it already holds it; by a rename, so a parallel run never reads half a file. */
function writeIfChanged(file: string, text: string | Buffer): boolean {
  if (existsSync(file) && readFileSync(file).equals(Buffer.from(text))) return false;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
  return true;
}

/** Builds `root`'s sources into `<root>/.test-build`; returns the folder and what it did. */
export function buildForTests(root: string): { dir: string; modules: number; written: number; removed: number; ms: number } {
  const started = Date.now();
  const out = join(root, TEST_BUILD_DIR);
  const expected = new Set<string>();
  let written = 0;
  let modules = 0;
  const entries = SOURCES.flatMap((dir) => filesUnder(root, dir, (f) => f.endsWith('.ts') && !f.endsWith('.d.ts')));
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: entries,
    outdir: out,
    outbase: root,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Stack traces of a failing child name the source's lines (node --enable-source-maps).
    sourcemap: 'inline',
    sourcesContent: false,
    write: false,
    logLevel: 'silent',
  });
  for (const file of result.outputFiles) {
    expected.add(relative(out, file.path));
    modules++;
    if (writeIfChanged(file.path, Buffer.from(file.contents))) written++;
  }
  for (const rel of filesUnder(root, ASSETS, () => true)) {
    expected.add(rel);
    const target = join(out, rel);
    if (!existsSync(target) || statSync(target).mtimeMs < statSync(join(root, rel)).mtimeMs) {
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(join(root, rel), target);
      written++;
    }
  }
  let removed = 0;
  for (const dir of SOURCES)
    for (const rel of filesUnder(out, dir, () => true)) {
      if (expected.has(rel) || rel.endsWith('.tmp')) continue;
      rmSync(join(out, rel), { force: true });
      removed++;
    }
  return { dir: relative(root, out) || out, modules, written, removed, ms: Date.now() - started };
}
