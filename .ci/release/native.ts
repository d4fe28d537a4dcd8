/**
 * The native side of a release: which machine a binary is built for (its ELF header), removing
 * every binary of another platform from node_modules (onnxruntime-node alone ships 288 MB for
 * five of them), and the node-gyp addons whose packages ship no binary for the target (sqlite3
 * for arm64, unix-dgram anywhere): a cached build, else the checkout's own (same machine), else
 * the package's prebuilt binary if it has any and GitHub is reachable, else a cross-build.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  closeSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Arch = 'arm64' | 'x64';

/** ELF e_machine of each target. */
const MACHINE: Record<Arch, number> = { x64: 0x3e, arm64: 0xb7 };
/**
 * The native modules the agent needs, by package: each must keep a binary for the target.
 * unix-dgram is an optional dependency of the agent, not of the release: without it, the agent's
 * systemd notifications come from a child (systemd-notify), which the shipped unit's
 * NotifyAccess=main drops, so the watchdog would restart a healthy agent.
 */
export const NATIVE_PACKAGES = ['sqlite3', 'onnxruntime-node', '@serialport/bindings-cpp', 'node-hid', 'unix-dgram'] as const;

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
    if (existsSync(dir))
      walk(dir, (p) => p.endsWith('.node') && elfMachine(p) === MACHINE[arch] && list.push(p.slice(nodeModules.length + 1)));
    if (list.length === 0) throw new Error(`release: ${pkg} has no native module for linux-${arch}`);
    found[pkg] = list;
  }
  return found;
}

/**
 * A node-gyp addon whose package ships no binary for some target, so the release provides
 * `build/Release/<binary>` itself.
 */
export interface AddonSpec {
  pkg: string;
  /** The file node-gyp writes into build/Release/ (where `bindings` and sqlite3 look for it). */
  binary: string;
  /**
   * What the binary depends on besides the package version and the machine: `napi` (an N-API
   * addon runs on every Node with that N-API version) or `node` (a nan addon is built for one Node
   * ABI, `process.versions.modules`: it must be built against the headers of the Node the release
   * runs on, Node 20 like this one).
   */
  abi: 'napi' | 'node';
  /** The package publishes prebuilt binaries that prebuild-install can fetch (`-r napi`). */
  prebuilds: boolean;
}

/** The addons the release builds (or fetches) itself; the other native packages ship binaries. */
export const BUILT_ADDONS: readonly AddonSpec[] = [
  // sqlite3 6 publishes linux-x64 binaries on GitHub, none in its npm package, none for arm64.
  { pkg: 'sqlite3', binary: 'node_sqlite3.node', abi: 'napi', prebuilds: true },
  // unix-dgram (nan) publishes no binaries at all: npm builds it at install time.
  { pkg: 'unix-dgram', binary: 'unix_dgram.node', abi: 'node', prebuilds: false },
];

export interface AddonOptions {
  /** The checkout's node_modules (its addons were built for this machine and this Node by npm ci). */
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
  const r = spawnSync(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

const versionOf = (pkgDir: string): string =>
  (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The cache key of an addon: the package version, the target, and what else the binary depends
 * on: the N-API version (`napi_build_version`: node-gyp takes this Node's) for an N-API addon,
 * the Node ABI (`process.versions.modules`, 115 for Node 20) for a nan addon. Not the compiler.
 */
export function addonCacheKey(spec: AddonSpec, version: string, arch: Arch): string {
  const abi = spec.abi === 'napi' ? `napi${process.versions.napi}` : `abi${process.versions.modules}`;
  return `${spec.pkg}-${version}-linux-${arch}-${abi}`;
}

/** The cached binary of `spec` for `arch`, for the package version in `pkgDir`, or null. */
export function cachedAddon(spec: AddonSpec, pkgDir: string, arch: Arch, cacheDir = defaultCacheDir()): string | null {
  const file = join(cacheDir, addonCacheKey(spec, versionOf(pkgDir), arch), spec.binary);
  return existsSync(file) ? file : null;
}

/** NODE_MODULE_VERSION of the Node headers in `nodedir` (include/node/node_version.h), or null. */
export function headersAbi(nodedir: string): string | null {
  try {
    return /^#define NODE_MODULE_VERSION (\d+)$/m.exec(readFileSync(join(nodedir, 'include/node/node_version.h'), 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * Puts `build/Release/<binary>` for `arch` into the staged package: from the cache, from the
 * checkout (same version, same machine, and this Node), from the package's prebuilt binaries
 * (prebuild-install, when it has them and GitHub answers), or built with node-gyp, cross-compiled
 * with g++-aarch64-linux-gnu for arm64 on x86 (sqlite3 ~2-6 min, unix-dgram seconds). Whatever
 * was obtained goes into the cache; only the binary stays in build/. Returns how it was obtained.
 */
export function provideAddon(spec: AddonSpec, stagedPkg: string, arch: Arch, opts: AddonOptions): string {
  if (!existsSync(join(stagedPkg, 'package.json')))
    throw new Error(`release: ${spec.pkg} is not in the staged node_modules (npm ci left it out?)`);
  const version = versionOf(stagedPkg);
  const cross = arch !== (process.arch as Arch);
  const cxx = cross ? 'aarch64-linux-gnu-g++' : 'g++';
  const key = addonCacheKey(spec, version, arch);
  const cached = join(opts.cacheDir, key, spec.binary);
  const target = join(stagedPkg, 'build/Release', spec.binary);
  const keep = (from: string, how: string): string => {
    mkdirSync(join(stagedPkg, 'build/Release'), { recursive: true });
    if (from !== target) copyFileSync(from, target);
    if (elfMachine(target) !== MACHINE[arch]) throw new Error(`release: ${spec.pkg} from ${how} is not a linux-${arch} binary`);
    if (from !== cached) {
      mkdirSync(join(opts.cacheDir, key), { recursive: true });
      copyFileSync(target, cached);
    }
    // Only the addon is needed at run time (sqlite3's objects and SQLite sources are ~20 MB).
    for (const e of readdirSync(join(stagedPkg, 'build')))
      if (e !== 'Release') rmSync(join(stagedPkg, 'build', e), { recursive: true, force: true });
    for (const e of readdirSync(join(stagedPkg, 'build/Release')))
      if (e !== spec.binary) rmSync(join(stagedPkg, 'build/Release', e), { recursive: true, force: true });
    opts.log(`${spec.pkg} ${version} for linux-${arch}: ${how}`);
    return how;
  };
  if (existsSync(cached)) return keep(cached, `cached (${cached})`);

  const host = join(opts.hostModules, spec.pkg);
  const hostBinary = join(host, 'build/Release', spec.binary);
  if (!cross && existsSync(hostBinary) && versionOf(host) === version) return keep(hostBinary, "the checkout's own build");

  if (spec.prebuilds) {
    const prebuild = run(
      join(opts.hostModules, '.bin/prebuild-install'),
      ['-r', 'napi', '--arch', arch, '--platform', 'linux'],
      stagedPkg,
      {},
      120_000,
    );
    if (prebuild.ok && existsSync(target)) return keep(target, "the project's prebuilt binary");
    opts.log(
      `${spec.pkg}: no prebuilt binary reachable (${prebuild.out.trim().split('\n').pop() || 'prebuild-install said nothing'}); building it${cross ? ` with ${cxx}` : ''}`,
    );
  }

  if (spec.abi === 'node') {
    // A nan addon loads only on the Node ABI it was compiled against: the headers must be those
    // of the release's Node (this Node's major version), or the cache key would lie.
    const abi = headersAbi(opts.nodedir);
    if (abi !== process.versions.modules)
      throw new Error(
        `release: the Node headers in ${opts.nodedir} are for Node ABI ${abi ?? '(unknown)'}, not ${process.versions.modules} (Node ${process.versions.node}): ${spec.pkg} built against them would not load on the release's Node; give --nodedir with Node ${process.versions.node.split('.')[0]} headers`,
      );
  }
  if (cross && !run(cxx, ['--version'], stagedPkg).ok)
    throw new Error(`release: cross-building ${spec.pkg} for ${arch} needs ${cxx} (apt-get install g++-aarch64-linux-gnu)`);
  const env: NodeJS.ProcessEnv = cross ? { CC: 'aarch64-linux-gnu-gcc', CXX: cxx, LINK: cxx, AR: 'aarch64-linux-gnu-ar' } : {};
  const started = Date.now();
  const gyp = run(
    join(opts.hostModules, '.bin/node-gyp'),
    ['rebuild', `--arch=${arch}`, `--nodedir=${opts.nodedir}`, '-j', 'max'],
    stagedPkg,
    env,
  );
  if (!gyp.ok) throw new Error(`release: building ${spec.pkg} for ${arch} failed:\n${gyp.out.split('\n').slice(-30).join('\n')}`);
  return keep(
    target,
    `built in ${Math.round((Date.now() - started) / 1000)} s (${cross ? 'cross-compiled' : 'compiled'}, cached as ${key})`,
  );
}
