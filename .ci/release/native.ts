/**
 * The native side of a release: which machine a binary is built for (its ELF header), removing
 * every binary of another platform from node_modules (onnxruntime-node alone ships 288 MB for
 * five of them), and SQLite's addon for the target, which the sqlite3 package does not ship:
 * a cached build, else its prebuilt binary if GitHub is reachable, else a cross-build.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, readdirSync, readSync, closeSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Arch = 'arm64' | 'x64';

/** ELF e_machine of each target. */
const MACHINE: Record<Arch, number> = { x64: 0x3e, arm64: 0xb7 };
/** The native modules the agent needs, by package: each must keep a binary for the target. */
export const NATIVE_PACKAGES = ['sqlite3', 'onnxruntime-node', '@serialport/bindings-cpp', 'node-hid'] as const;

const BINARY = /\.(node|so(\.\d+)*|dylib|dll|exe)$/;

/** The ELF machine of `file`, or null when it is not an ELF file. */
export function elfMachine(file: string): number | null {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(20);
    if (readSync(fd, head, 0, 20, 0) < 20 || head.readUInt32BE(0) !== 0x7f454c46) return null;
    return head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

function walk(dir: string, visit: (path: string) => void): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, visit);
    else if (e.isFile()) visit(p);
  }
}

function removeEmptyDirs(dir: string): boolean {
  let empty = true;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && removeEmptyDirs(join(dir, e.name))) continue;
    empty = false;
  }
  if (empty) rmdirSync(dir);
  return empty;
}

/** Prebuilt binaries for Android are ELF files for the same machine, linked against its libc. */
const ANDROID = /\/android-[^/]*\//;

/**
 * Removes every binary below `nodeModules` that is not an ELF file for `arch` on glibc Linux;
 * returns what went.
 */
export function pruneForeignBinaries(nodeModules: string, arch: Arch): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  walk(nodeModules, (p) => {
    if (!BINARY.test(p) || (elfMachine(p) === MACHINE[arch] && !ANDROID.test(p))) return;
    bytes += statSync(p).size;
    files++;
    rmSync(p);
  });
  removeEmptyDirs(nodeModules);
  return { files, bytes };
}

/** The `.node` files for `arch` in each native package; throws naming a package that has none. */
export function checkNativeModules(nodeModules: string, arch: Arch): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const pkg of NATIVE_PACKAGES) {
    const dir = join(nodeModules, pkg);
    const list: string[] = [];
    if (existsSync(dir)) walk(dir, (p) => p.endsWith('.node') && elfMachine(p) === MACHINE[arch] && list.push(p.slice(nodeModules.length + 1)));
    if (list.length === 0) throw new Error(`release: ${pkg} has no native module for linux-${arch}`);
    found[pkg] = list;
  }
  return found;
}

export interface SqliteOptions {
  /** The checkout's node_modules (its sqlite3 was built for this machine by npm ci). */
  hostModules: string;
  /** Node headers for node-gyp (a folder with include/node/common.gypi). */
  nodedir: string;
  cacheDir: string;
  log: (line: string) => void;
}

/**
 * The cache folder of the release builder (outside the checkout, so a clean clone reuses it).
 * Not EDGE_AGENT_*: the agent reads those as its configuration.
 */
export function defaultCacheDir(): string {
  return process.env.EDGE_RELEASE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'edge-agent-release');
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 30 * 60_000): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/**
 * The cache key of a sqlite3 addon: the package version, the target, and the N-API version it is
 * built against (`napi_build_version`: node-gyp takes this Node's). An N-API addon does not depend
 * on the Node version beyond that, nor on the compiler that built it.
 */
export function sqliteCacheKey(version: string, arch: Arch): string {
  return `sqlite3-${version}-linux-${arch}-napi${process.versions.napi}`;
}

/** The cached sqlite3 addon for `arch` of the sqlite3 package at `pkgDir`, or null. */
export function cachedSqlite(pkgDir: string, arch: Arch, cacheDir = defaultCacheDir()): string | null {
  const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const file = join(cacheDir, sqliteCacheKey(version, arch), 'node_sqlite3.node');
  return existsSync(file) ? file : null;
}

/**
 * Puts `build/Release/node_sqlite3.node` for `arch` into the staged sqlite3 package: from the cache,
 * from the checkout (same version, same machine), from the project's prebuilt binaries (prebuild-
 * install, when GitHub answers), or cross-built with node-gyp (g++-aarch64-linux-gnu, ~2-4 min).
 * Whatever was obtained goes into the cache.
 */
export function provideSqlite(stagedPkg: string, arch: Arch, opts: SqliteOptions): string {
  const version = (JSON.parse(readFileSync(join(stagedPkg, 'package.json'), 'utf8')) as { version: string }).version;
  const hostArch = process.arch as Arch;
  const cross = arch !== hostArch;
  const cxx = cross ? 'aarch64-linux-gnu-g++' : 'g++';
  const key = sqliteCacheKey(version, arch);
  const cached = join(opts.cacheDir, key, 'node_sqlite3.node');
  const target = join(stagedPkg, 'build/Release/node_sqlite3.node');
  mkdirSync(join(stagedPkg, 'build/Release'), { recursive: true });
  const keep = (from: string, how: string): string => {
    if (from !== target) copyFileSync(from, target);
    if (elfMachine(target) !== MACHINE[arch]) throw new Error(`release: sqlite3 from ${how} is not a linux-${arch} binary`);
    if (from !== cached) {
      mkdirSync(join(opts.cacheDir, key), { recursive: true });
      copyFileSync(target, cached);
    }
    opts.log(`sqlite3 ${version} for linux-${arch}: ${how}`);
    return how;
  };
  if (existsSync(cached)) return keep(cached, `cached (${cached})`);

  const host = join(opts.hostModules, 'sqlite3');
  const hostBinary = join(host, 'build/Release/node_sqlite3.node');
  if (!cross && existsSync(hostBinary) && (JSON.parse(readFileSync(join(host, 'package.json'), 'utf8')) as { version: string }).version === version) {
    return keep(hostBinary, 'the checkout\'s own build');
  }

  const prebuild = run(join(opts.hostModules, '.bin/prebuild-install'), ['-r', 'napi', '--arch', arch, '--platform', 'linux'], stagedPkg, {}, 120_000);
  if (prebuild.ok && existsSync(target)) return keep(target, 'the project\'s prebuilt binary');
  opts.log(`sqlite3: no prebuilt binary reachable (${prebuild.out.trim().split('\n').pop() || 'prebuild-install said nothing'}); building it${cross ? ` with ${cxx}` : ''}`);

  if (cross && !run(cxx, ['--version'], stagedPkg).ok) throw new Error(`release: cross-building sqlite3 for ${arch} needs ${cxx} (apt-get install g++-aarch64-linux-gnu)`);
  const env: NodeJS.ProcessEnv = cross ? { CC: 'aarch64-linux-gnu-gcc', CXX: cxx, LINK: cxx, AR: 'aarch64-linux-gnu-ar' } : {};
  const started = Date.now();
  const gyp = run(join(opts.hostModules, '.bin/node-gyp'), ['rebuild', `--arch=${arch}`, `--nodedir=${opts.nodedir}`, '-j', 'max'], stagedPkg, env);
  if (!gyp.ok) throw new Error(`release: building sqlite3 for ${arch} failed:\n${gyp.out.split('\n').slice(-30).join('\n')}`);
  const how = `built in ${Math.round((Date.now() - started) / 1000)} s (${cross ? 'cross-compiled' : 'compiled'}, cached as ${key})`;
  keep(target, how);
  // Only the addon is needed at run time: the objects and the unpacked SQLite sources are ~20 MB.
  for (const e of readdirSync(join(stagedPkg, 'build'))) if (e !== 'Release') rmSync(join(stagedPkg, 'build', e), { recursive: true, force: true });
  for (const e of readdirSync(join(stagedPkg, 'build/Release'))) if (e !== 'node_sqlite3.node') rmSync(join(stagedPkg, 'build/Release', e), { recursive: true, force: true });
  return how;
}
