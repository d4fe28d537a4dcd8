/**
 * The agent as it ships, for the benchmarks that run it as a process: compiled by tsconfig.build.json
 * into a temporary folder beside links to this checkout's node_modules, models and package.json.
 * Benchmarks run `node <dir>/dist/src/cli/main.js` like a terminal does, not the sources through
 * tsx (whose compile step and cache would be measured too).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BuiltAgent {
  dir: string;
  /** `dist/src/cli/main.js` of the build. */
  entry: string;
  remove(): void;
}

export function buildAgent(): BuiltAgent {
  const dir = mkdtempSync(join(tmpdir(), 'edge-agent-built-'));
  const tsconfig = existsSync(join(ROOT, 'tsconfig.build.json')) ? 'tsconfig.build.json' : 'tsconfig.json';
  const r = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', tsconfig, '--outDir', join(dir, 'dist'), '--sourceMap', 'false'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tsc -p ${tsconfig} failed:\n${r.stdout}${r.stderr}`);
  for (const name of ['node_modules', 'models', 'systemd']) symlinkSync(join(ROOT, name), join(dir, name));
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  return { dir, entry: join(dir, 'dist/src/cli/main.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
