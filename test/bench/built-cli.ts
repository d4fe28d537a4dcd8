/**
 * The `edge-agent` CLI as a terminal runs it: built with tsc into dist/ and started with plain
 * node (systemd/edge-agent.service: `node /opt/edge-agent/dist/src/cli/main.js run`). Benchmarks
 * that measure a process's memory or start-up use it: run from the sources through tsx, the same
 * process holds some 35 MB more (the loader, transpiled sources and their source maps) and starts
 * seconds later. `sources: true` gives the tsx one (test/helpers/cli.ts) instead.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DAEMON_ENVIRONMENT, DAEMON_NODE_FLAGS } from '../../src/setup/service-files/daemon-command.js';
import { ROOT, collectCli, spawnCli, testConfigFile, type CliResult } from '../helpers/cli.js';

export interface AgentCli {
  /** How the CLI runs: 'node dist/src/cli/main.js' or 'tsx src/cli/main.ts'. */
  runtime: string;
  spawn(args: string[], options?: SpawnOptions): ChildProcess;
  /** `edge-agent run ...args` as the systemd unit starts it: DAEMON_NODE_FLAGS on node's command line, DAEMON_ENVIRONMENT. */
  spawnDaemon(args: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  run(args: string[], options?: SpawnOptions & { timeoutMs?: number }): Promise<CliResult>;
}

export const BUILT_ENTRY = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** Builds the project (`tsc -p tsconfig.json`, as `npm run build`) unless `sources`, and returns the CLI. */
export function agentCli(options: { sources?: boolean; log?: (line: string) => void } = {}): AgentCli {
  if (options.sources) {
    return {
      runtime: 'tsx src/cli/main.ts',
      spawn: (args, o = {}) => spawnCli(args, o),
      spawnDaemon: (args, env = {}) => spawnCli(['run', ...args], { env: { ...DAEMON_ENVIRONMENT, ...env } }, DAEMON_NODE_FLAGS),
      run: (args, o = {}) => collectCli(spawnCli(args, o), args, o),
    };
  }
  const started = Date.now();
  options.log?.('building with tsc into dist/ (as npm run build) to run the CLI as a terminal does');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'pipe' });
  } catch {
    // Type errors elsewhere in the tree still emit (noEmitOnError is off); the check below decides.
  }
  if (!existsSync(BUILT_ENTRY) || statSync(BUILT_ENTRY).mtimeMs < started - 1000) throw new Error(`tsc did not emit ${BUILT_ENTRY}`);
  const spawnBuilt = (args: string[], o: SpawnOptions = {}, nodeFlags: readonly string[] = []) =>
    // Like the tests' children: an empty configuration (every default) unless one is given.
    spawn(process.execPath, [...nodeFlags, BUILT_ENTRY, ...args], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...o,
      env: {
        ...process.env,
        EDGE_AGENT_LOG_LEVEL: process.env.EDGE_AGENT_LOG_LEVEL ?? 'warn',
        EDGE_AGENT_CONFIG: process.env.EDGE_AGENT_CONFIG ?? testConfigFile(),
        ...o.env,
      },
    });
  return {
    runtime: 'node dist/src/cli/main.js',
    spawn: spawnBuilt,
    spawnDaemon: (args, env = {}) => spawnBuilt(['run', ...args], { env: { ...DAEMON_ENVIRONMENT, ...env } }, DAEMON_NODE_FLAGS),
    run: (args, o = {}) => collectCli(spawnBuilt(args, o), args, o),
  };
}

/** Every line a child writes on a stream, kept reading (one splitter for agent and benches). */
export { eachLine } from '../../src/daemon/lines.js';
