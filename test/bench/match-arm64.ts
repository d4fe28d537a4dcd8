/**
 * `npm run bench:match -- --arm64 [--json] [--finger-n N] [--arm64-fingers F]`: finger 1:N on the
 * Raspberry Pi release. The finger benchmark's harness (match-finger.ts) is bundled with every
 * product module it imports taken from the staged arm64 release (`dist/src/…`, compiled by the
 * release's own tsc run), not from these sources; the bundle then runs twice, on this machine's
 * Node and on the arm64 Node under qemu-user (arm64-kit.ts). Same code, same seeds: the two runs
 * must compute the same figures (`sameResults`), and the times say what emulation costs.
 *
 * qemu-user is no Pi: its times are not a Pi's (a Pi 4 usually runs Node faster than emulation on
 * one x86 core, which is not a guarantee). F fingers are searched mated and as many non-mated, among N
 * enrolled (default 40 among 10,000: about 10 minutes under emulation, most of it building the
 * synthetic gallery).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { arm64Kit } from './arm64-kit.js';
import { ROOT } from './built-agent.js';

/** Figures that depend on time or the machine, left out when the two runs are compared. */
const TIMING = new Set(['comparisonsPerSec', 'identifyP50Ms', 'identifyP95Ms', 'identifyCpuP95Ms', 'ratios', 'load']);

export interface Arm64FingerOptions {
  fingers?: number;
  indexSize?: number;
  log?: (m: string) => void;
}

/** Bundles match-finger.ts against `release`'s compiled modules; returns the bundle's path. */
async function bundleAgainst(release: string, dir: string): Promise<string> {
  const src = join(ROOT, 'src');
  const out = join(dir, 'match-finger.mjs');
  await build({
    entryPoints: [join(ROOT, 'test/bench/match-finger.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    logLevel: 'silent',
    plugins: [
      {
        name: 'release-modules',
        setup(b) {
          b.onResolve({ filter: /^\.\.?\// }, (args) => {
            const abs = resolve(args.resolveDir, args.path);
            if (!abs.startsWith(`${src}/`)) return undefined;
            const built = join(release, 'dist', relative(ROOT, abs)).replace(/\.ts$/, '.js');
            if (!existsSync(built))
              throw new Error(`${relative(ROOT, abs)} is not in the release at ${release}: rebuild it (npm run release -- --arch arm64)`);
            return { path: built, external: true };
          });
        },
      },
    ],
  });
  return out;
}

function run(node: string, bundle: string, args: string[], cwd: string): { result: Record<string, unknown>; wallMs: number } {
  const t = performance.now();
  const r = spawnSync(node, [bundle, '--json', ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 24 });
  const wallMs = Math.round(performance.now() - t);
  if (r.status !== 0) throw new Error(`${node} ${bundle} exited ${r.status}:\n${r.stderr.slice(-2000)}`);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return { result: JSON.parse(line) as Record<string, unknown>, wallMs };
}

const withoutTiming = (r: Record<string, unknown>) => JSON.stringify(Object.entries(r).filter(([k]) => !TIMING.has(k)));

export async function benchFingerArm64(options: Arm64FingerOptions = {}): Promise<Record<string, unknown>> {
  const kit = arm64Kit();
  if ('skipped' in kit) return { skipped: kit.skipped };
  const log = options.log ?? (() => {});
  const fingers = options.fingers ?? 40;
  const index = options.indexSize ?? 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'edge-agent-match-arm64-'));
  try {
    const bundle = await bundleAgainst(kit.release, dir);
    const args = ['--fingers', String(fingers), '--index', String(index), '--non-mated', String(fingers)];
    log(
      `finger 1:N on the arm64 release (${kit.release}): ${fingers} mated + ${fingers} non-mated searches among ${index}, on ${process.arch} first`,
    );
    const native = run(process.execPath, bundle, args, kit.release);
    log(`${process.arch}: p95 ${native.result.identifyP95Ms} ms; now arm64 under qemu-user (about 20× slower)`);
    const emulated = run(kit.node, bundle, args, kit.release);
    const p95 = (r: Record<string, unknown>) => Number(r.identifyP95Ms);
    return {
      release: kit.release,
      fingers,
      identifyN: index,
      sameResults: withoutTiming(native.result) === withoutTiming(emulated.result),
      [process.arch]: { ...native.result, runMs: native.wallMs },
      arm64Qemu: { ...emulated.result, runMs: emulated.wallMs },
      emulationP95Ratio: Math.round((p95(emulated.result) / p95(native.result)) * 10) / 10,
      note: 'arm64Qemu is qemu-user on this machine, not a Raspberry Pi: the same code and results, not a Pi 4 time',
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
