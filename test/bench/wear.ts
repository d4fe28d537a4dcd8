/**
 * `npm run bench:wear -- [--json] [--punches N] [--idle-sec S]`
 *
 * What the agent writes to its data folder, for SD-card wear on a Pi: bytes that reach the disk
 * (`write_bytes` of /proc/<pid>/io: what the kernel sends to storage for the process, page-
 * cache writes and fsyncs alike, WAL frames and checkpoints included) while
 *
 *   oneByOne   N punches (default 1000), each recorded and delivered before the next, as a
 *              terminal's day goes: one transaction to record it (synchronous=FULL), one HTTP
 *              request, one transaction to mark it delivered
 *   burst      N punches recorded back to back, delivered in batches (after an outage)
 *   idle       the real `edge-agent run` process (compiled; see built-agent.ts) with nothing to do,
 *              over S seconds (default 120), extrapolated to an hour (x 3600/S): a shorter window
 *              than an hour, so the hourly retention pass (it runs at start, before the window)
 *              is not in it; say so beside the figure
 *
 * The punches run through the agent's own daemon in this process (no scanners; the punch policy,
 * the outbox on a real SQLite file, the uploader and its API sink), so `write_bytes` of this
 * process is the agent's; the attendance service runs in a child process (`edge-agent serve`),
 * its database writes are not counted. The data folder is on this machine's disk (tmpdir); an SD
 * card adds its own write amplification below the file system, which no process can see.
 *
 * `perDay` combines them for a terminal with 500 punches a day: oneByOne x 0.5 + idle x 24.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttendanceClient } from '../../src/api/client.js';
import { parseConfig, type AgentConfig } from '../../src/config/config.js';
import { emptySecrets, type Secrets } from '../../src/config/secrets.js';
import { setLogLevel } from '../../src/core/logger.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { formatLocal } from '../../src/store/local-time.js';
import { waitForLine } from '../helpers/cli.js';
import { startServiceProcess } from '../helpers/service.js';
import { buildAgent } from './built-agent.js';
import { benchArgs } from './bench-args.js';

const { json, flag } = benchArgs();
const PUNCHES = flag('punches', 1000);
const IDLE_SEC = flag('idle-sec', 120);
const EMPLOYEES = 50;
const PUNCHES_PER_DAY = 500;

setLogLevel('*', 'error');

function writeBytes(pid: number | 'self'): number {
  const m = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  if (!m) throw new Error(`no write_bytes in /proc/${pid}/io`);
  return Number(m[1]);
}

function folderBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const work = mkdtempSync(join(tmpdir(), 'edge-agent-bench-wear-'));
const service = await startServiceProcess();
const admin = new AttendanceClient({
  baseUrl: service.url,
  clientId: service.clientId,
  apiKey: service.apiKey,
  apiSecret: service.apiSecret,
});
for (let e = 0; e < EMPLOYEES; e++) await admin.addOrUpdateUser({ employeeCode: `W${e}`, firstName: 'Wear', lastName: `Bench ${e}` });
const secrets: Secrets = { ...emptySecrets(), apiKey: service.apiKey, apiSecret: service.apiSecret };

function configFor(dataDir: string): AgentConfig {
  return parseConfig(
    {
      terminal: { id: 'bench-wear', site: 'bench', mode: 'toggle' },
      dataDir,
      api: { url: service.url, clientId: service.clientId },
      upstream: ['api'],
      policy: { dedupeWindowSec: 0 },
      logging: { level: 'error' },
    },
    'bench',
  );
}

/** Punch i: employee i mod 50, an hour after that employee's previous punch, in and out in turn. */
function punchAt(i: number): { employeeCode: string; at: string; direction: 'in' | 'out' } {
  const e = i % EMPLOYEES;
  const round = Math.floor(i / EMPLOYEES);
  return {
    employeeCode: `W${e}`,
    at: formatLocal(Date.UTC(2026, 0, 5, 6, 0, 0) + round * 3_600_000 + e * 1000, 60),
    direction: round % 2 === 0 ? 'in' : 'out',
  };
}

async function punches(
  dataDir: string,
  oneByOne: boolean,
): Promise<{ punches: number; writeBytes: number; bytesPerPunch: number; seconds: number; dataFolderBytes: number }> {
  const daemon = new Daemon({ config: configFor(dataDir), secrets, idlePollMs: 50 });
  const ctx = await daemon.start();
  let delivered = 0;
  ctx.uploader.on('delivered', (e) => (delivered += e.count));
  const settle = async () => {
    for (let i = 0; i < 6000; i++) {
      const s = await ctx.outbox.status();
      if (s.pending === 0 && s.dead === 0) return s;
      await sleep(5);
    }
    throw new Error('punches were not delivered in 30 s');
  };
  await sleep(1000);
  const before = writeBytes('self');
  const t0 = Date.now();
  for (let i = 0; i < PUNCHES; i++) {
    const r = await ctx.policy.punch({ ...punchAt(i), source: 'finger', tzOffset: 60 });
    if (!r.recorded) throw new Error(`punch ${i} was not recorded`);
    if (oneByOne) await settle();
  }
  const s = await settle();
  const written = writeBytes('self') - before;
  const seconds = (Date.now() - t0) / 1000;
  await daemon.stop();
  if (s.delivered !== PUNCHES) throw new Error(`${s.delivered} delivered, not ${PUNCHES} (events seen: ${delivered})`);
  return {
    punches: PUNCHES,
    writeBytes: written,
    bytesPerPunch: Math.round(written / PUNCHES),
    seconds: Math.round(seconds * 10) / 10,
    dataFolderBytes: folderBytes(dataDir),
  };
}

async function idle(dataDir: string): Promise<{ windowSec: number; writeBytes: number; perHourExtrapolated: number }> {
  const built = buildAgent();
  const secretFile = join(work, 'api-secret');
  writeFileSync(secretFile, `${service.apiSecret}\n`, { mode: 0o600 });
  // run needs a configuration (it never falls back to ./data): every default.
  const config = join(work, 'config.yaml');
  writeFileSync(config, '{}\n');
  const child = spawn(
    process.execPath,
    [
      built.entry,
      'run',
      '--config',
      config,
      '--data',
      dataDir,
      '--terminal',
      'bench-wear',
      '--api',
      service.url,
      '--client-id',
      service.clientId,
      '--api-key',
      service.apiKey,
      '--api-secret-file',
      secretFile,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EDGE_AGENT_LOG_LEVEL: 'warn' } },
  );
  try {
    await waitForLine(child, /edge-agent running/, 60_000, 'stderr');
    await sleep(5000); // start-up done: the retention pass and the first poll
    const before = writeBytes(child.pid!);
    await sleep(IDLE_SEC * 1000);
    const written = writeBytes(child.pid!) - before;
    return { windowSec: IDLE_SEC, writeBytes: written, perHourExtrapolated: Math.round((written * 3600) / IDLE_SEC) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    built.remove();
  }
}

try {
  const oneByOne = await punches(join(work, 'one-by-one'), true);
  const burst = await punches(join(work, 'burst'), false);
  const idleFigure = await idle(join(work, 'one-by-one'));
  const perThousand = Math.round((oneByOne.writeBytes * 1000) / PUNCHES);
  const perDay = Math.round((perThousand * PUNCHES_PER_DAY) / 1000 + idleFigure.perHourExtrapolated * 24);
  const result = {
    bench: 'wear',
    machine: { cores: cpus().length, loadAvg1: Math.round(loadavg()[0]! * 100) / 100 },
    bytesPer1000PunchesDelivered: perThousand,
    bytesPerHourIdle: idleFigure.perHourExtrapolated,
    oneByOne,
    burst: { ...burst, bytesPer1000: Math.round((burst.writeBytes * 1000) / PUNCHES) },
    idle: {
      ...idleFigure,
      note: `measured over ${IDLE_SEC} s and multiplied by ${Math.round((3600 / IDLE_SEC) * 100) / 100}; the hourly retention pass ran at start, outside the window`,
    },
    perDay: { punches: PUNCHES_PER_DAY, bytes: perDay, mb: Math.round((perDay / 1048576) * 100) / 100 },
  };
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await service.stop();
  rmSync(work, { recursive: true, force: true });
}
