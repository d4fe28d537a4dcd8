/**
 * What `run`, `enroll` and `identify` share about scanners: the `--scanner family:path[:baud]`
 * (repeatable) and `--simulate` flags, and, for `enroll` and `identify`, reaching the scanners:
 * through the running daemon's control socket when there is one (it holds the devices), or by
 * starting the agent's parts in this process when there is none.
 *
 * Tested in test/integration/agent-enroll.test.ts (enroll and identify in-process and through the
 * running agent's control socket) and test/integration/enroll-busy-scanner.test.ts.
 */
import type { AgentConfig } from '../config/config.js';
import { parseScannerSpec } from '../setup/provision.js';
import { callDaemon, controlSocketPath, isDaemonListening } from '../daemon/control-socket.js';
import { Daemon } from '../daemon/daemon.js';
import type { Secrets } from '../config/secrets.js';
import { terminalComponents } from '../daemon/wiring.js';
import type { TerminalRuntime } from '../daemon/runtime.js';

export const SCANNER_FLAGS = {
  scanner: { type: 'string', multiple: true },
  simulate: { type: 'boolean' },
} as const;

export function applyScannerFlags<C extends AgentConfig>(config: C, values: { scanner?: string[]; simulate?: boolean }): C {
  if (values.scanner && values.scanner.length > 0) config.scanners = values.scanner.map(parseScannerSpec);
  if (values.simulate) config.simulate = true;
  return config;
}

/**
 * Runs `viaDaemon` when a daemon answers on this data folder, else starts the terminal's parts
 * here (no ops, no control socket) and runs `inProcess` with them.
 */
export async function withTerminal<T>(
  config: AgentConfig,
  secrets: Secrets,
  viaDaemon: (
    call: (action: string, body: Record<string, unknown>, onProgress?: (e: Record<string, unknown>) => void) => Promise<unknown>,
  ) => Promise<T>,
  inProcess: (rt: TerminalRuntime) => Promise<T>,
): Promise<T> {
  const socket = controlSocketPath(config.dataDir);
  if (await isDaemonListening(socket)) {
    return viaDaemon((action, body, onProgress) => callDaemon(socket, action, body, onProgress));
  }
  const { runtime, components } = await terminalComponents(config, secrets, { ops: false, control: false, siteSync: true });
  const daemon = new Daemon({ config, secrets, deliver: false });
  for (const c of components) daemon.use(c);
  await daemon.start();
  try {
    // Give the scanners a moment to open before asking for a capture; one that another process
    // holds (the agent's service) will not open here, and the command says so at once.
    const deadline = Date.now() + 10_000;
    const opening = () => [...runtime.workers.values()].filter((w) => w.status !== 'ready' && w.lastError?.code !== 'TRANSPORT_BUSY');
    while (opening().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return await inProcess(runtime);
  } finally {
    await daemon.stop();
  }
}
