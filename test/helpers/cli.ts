/**
 * Runs the real `edge-agent` CLI in a child process: under vitest from the tests' build of the
 * sources (`test-build.ts`, made by the global setup), elsewhere (benchmarks, or
 * `EDGE_AGENT_TEST_CLI=sources`) from the sources through tsx.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendants, killPids } from './procs.js';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The CLI's sources. */
export const SOURCE_ENTRY = `${ROOT}src/cli/main.ts`;
/** tsx by its file URL, so a child runs from any working folder (a test of running elsewhere). */
export const TSX_IMPORT = ['--import', import.meta.resolve('tsx')];
/** The tests' build the global setup made for this run, if it made one. */
const BUILT = process.env.EDGE_AGENT_TEST_CLI_BUILD;
/** What a child runs: the tests' build of the CLI, or its sources. */
export const CLI_ENTRY = BUILT ? join(BUILT, 'src/cli/main.js') : SOURCE_ENTRY;
/** The node arguments before CLI_ENTRY: none for the build; tsx for the sources (and source maps for both). */
export const CLI_NODE_ARGS: readonly string[] = BUILT ? ['--enable-source-maps'] : TSX_IMPORT;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * SIGKILLs a child and everything it started. A child killed alone leaves its own children
 * (the socat of `edge-agent simulate`) running, orphaned.
 */
export function killTree(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const below = descendants(child.pid);
  child.kill('SIGKILL');
  killPids(below);
}

/**
 * The environment of a child a test starts: this one's, without the test suite's own
 * `EDGE_AGENT_TEST_*` switches (the agent would take them for configuration keys and refuse
 * them), with `extra` on top.
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('EDGE_AGENT_TEST_')) env[k] = v;
  return { ...env, ...extra };
}

/** The errors of a write to a child's stdin that only say the child closed its end of the pipe. */
const CLOSED_PIPE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);
const guardedStdins = new WeakSet<NodeJS.WritableStream>();

/**
 * Writes `data` to a child's stdin, or with `end` writes it (if any) and closes stdin. A child
 * that exits before it reads its input (it failed early, or needed none) has closed the other end
 * of the pipe: the write then fails with EPIPE on the stream after this has returned, and without
 * a listener that error is an uncaught exception that fails the whole test run, not the one test.
 * What the test checks is the child's exit and output, so a closed pipe is ignored here; any other
 * error of the stream is thrown as before.
 */
export function writeStdin(child: ChildProcess, data: string | undefined, { end = false }: { end?: boolean } = {}): void {
  const stdin = child.stdin;
  if (!stdin) throw new Error(`the child ${child.pid} has no stdin pipe (spawn it with stdio[0] 'pipe')`);
  if (!guardedStdins.has(stdin)) {
    guardedStdins.add(stdin);
    stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (!CLOSED_PIPE.has(err.code ?? '')) throw err;
    });
  }
  if (end) {
    if (data === undefined) stdin.end();
    else stdin.end(data);
  } else if (data !== undefined) stdin.write(data);
}

/** The last this many characters of each stream are kept for a failure message. */
const KEEP = 32_000;
const outputs = new WeakMap<ChildProcess, { stdout: string; stderr: string }>();

/**
 * Keeps what `child` writes (the tail of stdout and stderr) for `outputOf`, without echoing it:
 * the suite prints the reporter only. With `EDGE_AGENT_TEST_LOGS=1` each line is echoed to
 * stderr too, prefixed with the child's pid.
 */
export function captureOutput(child: ChildProcess): ChildProcess {
  const out = { stdout: '', stderr: '' };
  outputs.set(child, out);
  const echo = process.env.EDGE_AGENT_TEST_LOGS === '1';
  for (const name of ['stdout', 'stderr'] as const) {
    child[name]?.on('data', (d: Buffer) => {
      const text = d.toString();
      out[name] = (out[name] + text).slice(-KEEP);
      if (echo) process.stderr.write(text.replace(/^(?=.)/gm, `[${child.pid} ${name}] `));
    });
  }
  return child;
}

/** What a child started through `spawnCli` (or given to `captureOutput`) wrote, for a failure message. */
export function outputOf(child: ChildProcess): string {
  const out = outputs.get(child);
  if (!out) return '(output not captured)';
  return `--- stdout of ${child.pid} (last ${KEEP} characters) ---\n${out.stdout}\n--- stderr ---\n${out.stderr}`;
}

/**
 * The configuration a child finds when its test gives none (`$EDGE_AGENT_CONFIG`): an empty file
 * in the test file's temp folder, so every default applies and the data folder is `data` beside
 * it. Commands that record or read punches refuse to run without a configuration (src/config/
 * locate.ts); the tests that give `--data` and flags keep working, and none of them can pick up
 * this machine's /etc/edge-agent/config.yaml or a checkout's demo config. A test of the rule
 * itself passes `EDGE_AGENT_CONFIG: ''` (and the EDGE_AGENT_TEST_*_CONFIG seams) in `env`.
 */
export function testConfigFile(): string {
  const file = join(tmpdir(), 'edge-agent-test-config.yaml');
  if (!existsSync(file))
    writeFileSync(file, '# the configuration of children that were given none (test/helpers/cli.ts): every default\n{}\n');
  return file;
}

/** Starts `edge-agent ...args` and returns the child (for daemons and kill tests); `nodeFlags` go before the script, as in the unit's ExecStart. */
export function spawnCli(args: string[], options: SpawnOptions = {}, nodeFlags: readonly string[] = []): ChildProcess {
  return captureOutput(
    spawn(process.execPath, [...nodeFlags, ...CLI_NODE_ARGS, CLI_ENTRY, ...args], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...options,
      env: childEnv({
        EDGE_AGENT_LOG_LEVEL: process.env.EDGE_AGENT_LOG_LEVEL ?? 'warn',
        EDGE_AGENT_CONFIG: process.env.EDGE_AGENT_CONFIG ?? testConfigFile(),
        ...options.env,
      }),
    }),
  );
}

/** Runs `edge-agent ...args` to completion. */
export function runCli(args: string[], options: SpawnOptions & { input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return collectCli(spawnCli(args, options), args, options);
}

/** Collects the output of a started `edge-agent ...args` until it exits (or kills it after `timeoutMs`). */
export function collectCli(child: ChildProcess, args: string[], options: { input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d));
    child.stderr?.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      killTree(child);
      reject(
        new Error(`edge-agent ${args.join(' ')} did not finish in ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (child.stdin) writeStdin(child, options.input, { end: true });
  });
}

/** Resolves with the first line of the child's stdout (or stderr) matching `re`. */
export function waitForLine(
  child: ChildProcess,
  re: RegExp,
  timeoutMs = 20_000,
  stream: 'stdout' | 'stderr' | 'both' = 'both',
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const streams = stream === 'both' ? [child.stdout, child.stderr] : [child[stream]];
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(`no line matching ${re} within ${timeoutMs} ms\n${outputs.has(child) ? outputOf(child) : `output so far:\n${buf}`}`),
      );
    }, timeoutMs);
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        const m = line.match(re);
        if (m) {
          cleanup();
          resolve(m);
          return;
        }
      }
    };
    const onExit = () => {
      cleanup();
      reject(
        new Error(
          `process exited (${child.exitCode ?? child.signalCode}) before a line matching ${re}\n${outputs.has(child) ? outputOf(child) : `output:\n${buf}`}`,
        ),
      );
    };
    function cleanup() {
      clearTimeout(timer);
      for (const s of streams) s?.off('data', onData);
      child.off('exit', onExit);
    }
    for (const s of streams) s?.on('data', onData);
    child.on('exit', onExit);
  });
}
