/**
 * The arm64 release under emulation, for the benchmarks that show a Raspberry Pi build's figures
 * on this x86 machine: qemu-user, the arm64 Node of .ci/qemu-arm64.sh (same version as this Node)
 * and a release built by `npm run release -- --arch arm64` (dist/release/stage-arm64/).
 *
 * Emulation is no Raspberry Pi: qemu-user runs Node's code many times slower than one x86 core
 * (about 20× on a plain numeric loop here, 9× on finger identification). A figure under qemu shows
 * that the arm64 build runs and what it computes; it is not a Pi's time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCacheDir } from '../../.ci/release/native.js';
import { ROOT } from './built-agent.js';

export interface Arm64Kit {
  /** The wrapper that runs the arm64 Node under qemu-user. */
  node: string;
  /** The staged arm64 release: `dist/src/…`, `node_modules/…`, `models/…`. */
  release: string;
}

/** The kit, or why it is not there and the command that makes it. */
export function arm64Kit(): Arm64Kit | { skipped: string } {
  if (spawnSync('sh', ['-c', 'command -v qemu-aarch64-static']).status !== 0)
    return { skipped: 'no qemu-aarch64-static (apt-get install qemu-user-static)' };
  const node = join(defaultCacheDir(), `arm64-node-${process.versions.node}`, 'node-arm64');
  if (!existsSync(node)) return { skipped: `no arm64 Node at ${node} (bash .ci/qemu-arm64.sh)` };
  const stage = join(ROOT, 'dist/release/stage-arm64');
  const release = existsSync(stage) ? readdirSync(stage).find((d) => d.startsWith('edge-agent-')) : undefined;
  if (!release) return { skipped: `no arm64 release in ${stage} (npm run release -- --arch arm64)` };
  return { node, release: join(stage, release) };
}
