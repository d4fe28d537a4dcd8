/**
 * What the agent's end-to-end tests share: a terminal data folder with its 0600 secrets file, a
 * person's R30x module template taken through the real driver from an in-process simulator and
 * stored in the terminal's encrypted template cache (no image extraction needed), a simulated
 * module on a real pty (`edge-agent simulate r30x --link`), and `edge-agent run` as a child.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createSimulatedScanner } from '../../drivers/simulated.js';
import { syntheticImages } from '../../src/synthetic/simulator-sources.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { TemplateCache } from '../../src/store/template-cache.js';
import { callDaemon, controlSocketPath } from '../../src/daemon/control-socket.js';
import { killTree, spawnCli, waitForLine, writeStdin } from './cli.js';

export interface TerminalDir {
  dataDir: string;
  templateKey: Buffer;
  siteKey: Buffer;
  /** The secrets file (mode 0600) in the data folder. */
  secretsFile: string;
}

/** A fresh data folder with `secrets.yaml` (0600) holding the template key, the site key and more. */
export function terminalDir(options: { siteKey?: Buffer; extra?: Record<string, string> } = {}): TerminalDir {
  const dataDir = mkdtempSync(join(tmpdir(), 'agent-e2e-'));
  const templateKey = randomBytes(32);
  const siteKey = options.siteKey ?? randomBytes(32);
  const secretsFile = join(dataDir, 'secrets.yaml');
  const lines = [
    `templateKey: ${templateKey.toString('hex')}`,
    `siteKey: ${siteKey.toString('hex')}`,
    ...Object.entries(options.extra ?? {}).map(([k, v]) => `${k}: ${v}`),
  ];
  writeFileSync(secretsFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  return { dataDir, templateKey, siteKey, secretsFile };
}

/**
 * Enrols virtual finger `fingerId` on an in-process simulated R30x module through the real driver
 * (two presses, RegModel, UpChar) and returns the module's template (format r30x-char).
 */
export async function moduleTemplateOf(fingerId: number): Promise<{ format: 'r30x-char'; data: Uint8Array }> {
  const { scanner, simulator } = await createSimulatedScanner('r30x', { images: syntheticImages });
  await scanner.open();
  try {
    simulator.present(fingerId);
    const t = await scanner.enrollOnModule({
      onStep: (step) => {
        if (step === 1) {
          simulator.lift();
          setTimeout(() => simulator.present(fingerId), 300);
        }
      },
    });
    simulator.lift();
    return { format: 'r30x-char', data: t.data };
  } finally {
    await scanner.close();
    await simulator.close();
  }
}

/** Stores module templates in the terminal's template cache (the daemon must not run). */
export async function seedModuleTemplates(dir: TerminalDir, people: Array<{ employeeCode: string; fingerId: number }>): Promise<void> {
  const db = await openAgentDatabase(dir.dataDir);
  try {
    const cache = await TemplateCache.open(db, { key: dir.templateKey });
    for (const p of people) {
      const t = await moduleTemplateOf(p.fingerId);
      await cache.upsertUser({ employeeCode: p.employeeCode });
      await cache.addTemplate({
        employeeCode: p.employeeCode,
        modality: 'finger',
        position: 'right-index',
        format: t.format,
        data: t.data,
        sensorModel: 'R503',
      });
    }
  } finally {
    await db.close();
  }
}

export interface SimulatedModule {
  child: ChildProcess;
  /** The host side of the pty, as a serial port path. */
  device: string;
  /** Sends one control line and resolves to the simulator's `ok: ...` / `error: ...` answer. */
  send(line: string): Promise<string>;
  stop(): Promise<number | null>;
}

/** `edge-agent simulate r30x --link DIR/fp` (or another serial `kind`: gt521, badge) as a child process (paced at the baud rate on a real pty). */
export async function startSimulatedModule(args: string[] = [], kind: 'r30x' | 'gt521' | 'badge' = 'r30x'): Promise<SimulatedModule> {
  const link = join(mkdtempSync(join(tmpdir(), 'agent-e2e-pty-')), 'fp');
  const child = spawnCli(['simulate', kind, '--link', link, ...args]);
  let device: string | undefined;
  try {
    [, device] = await waitForLine(child, /^device: (.+)$/, 20_000, 'stdout');
  } catch (err) {
    killTree(child);
    throw err;
  }
  return {
    child,
    device: device!,
    async send(line: string) {
      const reply = waitForLine(child, /^(ok|error): .*/, 10_000, 'stdout');
      writeStdin(child, `${line}\n`);
      return (await reply)[0];
    },
    stop: () => stopChild(child),
  };
}

/**
 * The exit of a child that stops by itself (a simulator told "quit"): resolves to its exit code;
 * SIGKILLed (with whatever it started) after `timeoutMs`, it resolves to null. Signalling a child
 * that is already on its way out races its own exit.
 */
export function exitOf(child: ChildProcess, timeoutMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const t = setTimeout(() => killTree(child), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

/** SIGTERM, then SIGKILL (with whatever it started) after 10 s; resolves to the exit code. */
export function stopChild(child: ChildProcess): Promise<number | null> {
  const exit = exitOf(child);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  return exit;
}

/**
 * `edge-agent run ...args` with info logs (JSON lines on stdout); resolves once it says it runs.
 * Wait for its log lines with `waitForLine(agent, /"msg":"capture: punched"/)`.
 */
export async function startAgent(args: string[], env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawnCli(['run', ...args], { env: { EDGE_AGENT_LOG_LEVEL: 'info', ...env } });
  try {
    await waitForLine(child, /edge-agent running/, 30_000);
  } catch (err) {
    killTree(child);
    throw err;
  }
  return child;
}

/** The daemon's `status` over its control socket (info and metrics). */
export async function daemonStatus(dataDir: string): Promise<{ info: Record<string, unknown>; metrics: Record<string, unknown> }> {
  return (await callDaemon(controlSocketPath(dataDir), 'status', {})) as {
    info: Record<string, unknown>;
    metrics: Record<string, unknown>;
  };
}

/** Polls `fn` until it returns a truthy value (or throws after `timeoutMs`). */
export async function until<T>(fn: () => Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The outbox's counts straight from the agent's database file, as a second reader (WAL lets it
 * read while the agent writes). For polling: a CLI run per poll would compete with the agent for
 * the CPU; check the final figures through `queue status` as a technician would.
 */
export async function outboxCounts(dataDir: string): Promise<{ pending: number; dead: number; delivered: number }> {
  const db = await SqliteDatabase.open(join(dataDir, 'agent.db'), { readonly: true });
  try {
    const rows = await db.all<{ state: string; n: number }>('SELECT state, n FROM outbox_counts');
    const n = (state: string) => rows.find((r) => r.state === state)?.n ?? 0;
    return { pending: n('pending'), dead: n('dead'), delivered: n('delivered') };
  } finally {
    await db.close();
  }
}
