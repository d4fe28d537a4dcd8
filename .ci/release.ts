/**
 * `npm run release -- --arch arm64|x64 [--out DIR] [--no-deb] [--deb-compression xz|gzip] [--nodedir DIR]`
 * `npm run release -- --arch arm64 --check-cache`   exit 0 when sqlite3 and unix-dgram for arm64 are cached
 *
 * Builds a self-contained release of this checkout for a Linux machine of the given architecture
 * (a Raspberry Pi: arm64) into DIR (default dist/release/):
 *
 *   edge-agent-<version>-linux-<arch>.tar.gz   one folder edge-agent-<version>-linux-<arch>/ with
 *       dist/          the agent compiled by tsconfig.build.json (no tests)
 *       node_modules/  the production dependencies, each native module built for <arch> (sqlite3,
 *                      onnxruntime-node, serialport, node-hid, unix-dgram: checked to be there
 *                      as ELF files of that machine) and every binary of another platform removed
 *       models/        the ONNX models
 *       systemd/       the unit and the udev rules
 *       package.json, release.json (name, version, arch, commit), SHA256SUMS (sha256sum -c)
 *   edge-agent_<version>_<debarch>.deb          the same release as a Debian package (debarch:
 *                      arm64, or amd64 for x64); see systemd/debian/ and docs/raspberry-pi.md
 *
 * The dependencies come from the lock file (npm ci --omit=dev --ignore-scripts, through the npm
 * registry and its cache). sqlite3 has no linux-arm64 binary in its package and unix-dgram (the
 * agent's sd_notify socket) none at all: see native.ts for where they come from (a cache in
 * ~/.cache/edge-agent-release keyed by versions, so CI builds each once). Cross-building needs
 * g++-aarch64-linux-gnu; the Node headers for node-gyp (--nodedir, or $EDGE_RELEASE_NODEDIR, or
 * this Node's) must be of this Node's ABI: unix-dgram is a nan addon, built for one Node ABI (the
 * release runs on Node 20, like the builder); sqlite3 is N-API, the same on every Node.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKSUM_FILE, RELEASE_FILE, checksumText, type ReleaseInfo } from '../src/setup/releases.js';
import { buildDeb } from './release/deb.js';
import {
  BUILT_ADDONS,
  cachedAddon,
  checkNativeModules,
  defaultCacheDir,
  provideAddon,
  pruneForeignBinaries,
  type Arch,
} from './release/native.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const arch = (opt('arch') ?? process.arch) as Arch;
if (arch !== 'arm64' && arch !== 'x64') {
  process.stderr.write(`release: --arch arm64 or x64, not "${arch}"\n`);
  process.exit(2);
}
if (args.includes('--check-cache')) {
  // For CI: exit 0 when every addon the release builds is cached for this arch (no cross-compiler
  // needed), 1 otherwise.
  process.exit(BUILT_ADDONS.every((spec) => cachedAddon(spec, join(ROOT, 'node_modules', spec.pkg), arch)) ? 0 : 1);
}
const outDir = resolve(opt('out') ?? join(ROOT, 'dist/release'));
const started = Date.now();
const log = (line: string) => process.stderr.write(`[release ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);

function sh(cmd: string, cmdArgs: string[], cwd = ROOT): string {
  const r = spawnSync(cmd, cmdArgs, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}${r.error ?? ''}`);
  return r.stdout;
}

/** The Node headers node-gyp builds against (include/node/common.gypi below it). */
function nodeHeaders(): string {
  for (const dir of [opt('nodedir'), process.env.EDGE_RELEASE_NODEDIR, dirname(dirname(process.execPath))]) {
    if (dir && existsSync(join(dir, 'include/node/common.gypi'))) return dir;
  }
  throw new Error('release: no Node headers found (include/node/common.gypi): give --nodedir DIR');
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown> & { name: string; version: string };
const name = `edge-agent-${pkg.version}-linux-${arch}`;
const stageRoot = join(outDir, `stage-${arch}`);
const stage = join(stageRoot, name);
rmSync(stageRoot, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });

log(`edge-agent ${pkg.version} for linux-${arch} into ${outDir}`);
const tsconfig = existsSync(join(ROOT, 'tsconfig.build.json')) ? 'tsconfig.build.json' : 'tsconfig.json';
sh(join(ROOT, 'node_modules/.bin/tsc'), ['-p', tsconfig, '--outDir', join(stage, 'dist'), '--sourceMap', 'false']);
if (existsSync(join(stage, 'dist/test'))) throw new Error(`release: ${tsconfig} compiles the tests; the release leaves them out`);
log(`compiled with ${tsconfig}`);

// The lock file decides every version; scripts stay off (sqlite3's would build for this machine,
// onnxruntime-node's would download CUDA): the native modules are provided below.
for (const f of ['package.json', 'package-lock.json', '.npmrc']) cpSync(join(ROOT, f), join(stage, f));
sh('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], stage);
log('production dependencies installed (npm ci --omit=dev)');

const addonOptions = { hostModules: join(ROOT, 'node_modules'), nodedir: nodeHeaders(), cacheDir: defaultCacheDir(), log };
for (const spec of BUILT_ADDONS) provideAddon(spec, join(stage, 'node_modules', spec.pkg), arch, addonOptions);
const pruned = pruneForeignBinaries(join(stage, 'node_modules'), arch);
log(`removed ${pruned.files} binaries of other platforms (${Math.round(pruned.bytes / 1048576)} MB)`);
const natives = checkNativeModules(join(stage, 'node_modules'), arch);
log(`native modules for linux-${arch}: ${Object.values(natives).flat().join(', ')}`);
rmSync(join(stage, 'node_modules/.bin'), { recursive: true, force: true });
rmSync(join(stage, 'node_modules/.package-lock.json'), { force: true });

// What runs: the models, the unit and the rules, and a package.json without the development side.
mkdirSync(join(stage, 'models'));
for (const f of readdirSync(join(ROOT, 'models')))
  if (f.endsWith('.onnx') || f === 'README.md') cpSync(join(ROOT, 'models', f), join(stage, 'models', f));
mkdirSync(join(stage, 'systemd'));
for (const f of ['edge-agent.service', '99-edge-agent.rules']) cpSync(join(ROOT, 'systemd', f), join(stage, 'systemd', f));
const { devDependencies: _dev, scripts: _scripts, ...runtime } = pkg;
writeFileSync(join(stage, 'package.json'), `${JSON.stringify(runtime, null, 2)}\n`);
rmSync(join(stage, 'package-lock.json'));
rmSync(join(stage, '.npmrc'));
chmodSync(join(stage, 'dist/src/cli/main.js'), 0o755);

const commit = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
const info: ReleaseInfo = {
  name: 'edge-agent',
  version: pkg.version,
  arch,
  ...(commit.status === 0 ? { commit: commit.stdout.trim() } : {}),
};
writeFileSync(join(stage, RELEASE_FILE), `${JSON.stringify(info, null, 2)}\n`);
writeFileSync(join(stage, CHECKSUM_FILE), checksumText(stage));

// Reproducible archive: sorted names, root owner, one timestamp (the commit's).
const epoch =
  process.env.SOURCE_DATE_EPOCH ?? (spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() || '0');
const tarball = join(outDir, `${name}.tar.gz`);
sh('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=@${epoch}`, '-czf', tarball, '-C', stageRoot, name]);
log(`${tarball} (${Math.round(Number(sh('stat', ['-c', '%s', tarball])) / 1048576)} MB)`);

if (!args.includes('--no-deb')) {
  const deb = buildDeb(stage, outDir, { systemdDir: join(ROOT, 'systemd'), compression: opt('deb-compression') ?? 'xz' });
  log(`${deb} (${Math.round(Number(sh('stat', ['-c', '%s', deb])) / 1048576)} MB)`);
}
log(`done; the unpacked release stays in ${stage}`);
