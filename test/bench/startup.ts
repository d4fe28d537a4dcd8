/**
 * `npm run bench:startup -- [--json] [--runs N] [--qemu-runs N]`
 *
 * How long `edge-agent help` and `edge-agent queue status` take from exec to exit, as a terminal
 * runs them (`node dist/src/cli/main.js`, compiled by tsconfig.build.json; see built-agent.ts), on
 * this machine; beside it `node -e 0`, what any Node program pays. queue status runs on a fresh
 * data folder (it creates and migrates agent.db the first time: the first run is left out).
 *
 * With qemu-user and the arm64 kit of .ci/qemu-arm64.sh present, and an arm64 release built by
 * `npm run release -- --arch arm64` (dist/release/stage-arm64/), the same under emulation: the arm64
 * Node on the arm64 release. Emulation is no Raspberry Pi (a Pi 4 runs Node several times faster
 * than qemu-user on one x86 core); it shows what each command loads, not a Pi's figure.
 *
 * Each figure has the wall time (median, min, max) and the CPU time the command used (median,
 * from the children's rusage): on a machine shared with other work the wall time grows with the
 * load, the CPU time much less.
 *
 * Floor compared with: 500 ms for each command on x86 (`ratioToFloor` = median / 500).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { arm64Kit } from './arm64-kit.js';
import { buildAgent } from './built-agent.js';
import { benchArgs } from './bench-args.js';

const { json, flag } = benchArgs();
const RUNS = flag('runs', 9);
const QEMU_RUNS = flag('qemu-runs', 3);
const FLOOR_MS = 500;

interface Figure {
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** CPU time (user + system) of the command, median: what it costs whatever else the machine runs. */
  cpuMedianMs: number;
  runs: number;
}

/** CPU time of the reaped children of this process so far (cutime + cstime of /proc/self/stat). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100; // fields 16 and 17, in clock ticks (USER_HZ = 100)
}

const median = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

function time(cmd: string, argv: string[], runs: number, env: NodeJS.ProcessEnv = {}): Figure {
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = childrenCpuMs();
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd, argv, { encoding: 'utf8', env: { ...process.env, ...env } });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpu.push(childrenCpuMs() - c0);
    if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  return { medianMs: median(ms), minMs: Math.round(Math.min(...ms)), maxMs: Math.round(Math.max(...ms)), cpuMedianMs: median(cpu), runs };
}

function measure(node: string, entry: string, runs: number): { nodeAlone: Figure; help: Figure; queueStatus: Figure } {
  const data = mkdtempSync(join(tmpdir(), 'edge-agent-bench-startup-'));
  // queue status needs a configuration (it never falls back to ./data): every default, beside the data.
  const config = join(data, 'config.yaml');
  writeFileSync(config, '{}\n');
  const queue = [entry, 'queue', 'status', '--config', config, '--data', data, '--terminal', 'bench', '--api', 'http://127.0.0.1:9'];
  try {
    time(node, queue, 1); // creates and migrates agent.db
    return { nodeAlone: time(node, ['-e', '0'], runs), help: time(node, [entry, 'help'], runs), queueStatus: time(node, queue, runs) };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

const built = buildAgent();
let x86: ReturnType<typeof measure>;
try {
  x86 = measure(process.execPath, built.entry, RUNS);
} finally {
  built.remove();
}
const kit = arm64Kit();
const arm64Qemu =
  'skipped' in kit ? kit : { release: kit.release, ...measure(kit.node, join(kit.release, 'dist/src/cli/main.js'), QEMU_RUNS) };

const result = {
  bench: 'startup',
  machine: { arch: process.arch, cores: cpus().length, loadAvg1: Math.round(loadavg()[0]! * 100) / 100 },
  floorMs: FLOOR_MS,
  [process.arch]: x86,
  ratioToFloor: {
    help: Math.round((x86.help.medianMs / FLOOR_MS) * 100) / 100,
    queueStatus: Math.round((x86.queueStatus.medianMs / FLOOR_MS) * 100) / 100,
  },
  arm64Qemu,
  loadAvgAfter: Math.round(loadavg()[0]! * 100) / 100,
};
if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
