/**
 * Benchmark of the operations console with a large fleet: 1,000 simulated terminals
 * (test/bench/console-fleet-publisher.ts: retained state, info and metrics as agents publish
 * them, 20 sites of 50) on a real broker, `edge-agent console` as a child process, and the page
 * in Debian's Chromium (playwright-core).
 *
 * - First full view: from the call of page.goto to the frame that shows the table holding every
 *   terminal (the page marks body[data-ready] and window.__firstFullView once that frame was
 *   produced), on this machine's clock; beside it the same moment from the page's navigation start.
 * - While updates flow (metrics of 100 terminals a second, one state change in 200: every
 *   terminal every 10 s, three times what agents send at the default 30 s), over 20 s:
 *   the renderer's main-thread busy time (CDP Performance.getMetrics TaskDuration), the CPU of
 *   every Chromium process (/proc: renderer, GPU, browser), and the console server's CPU (/proc),
 *   each as a percentage of one core.
 *
 *   npm run bench:console -- --json [--terminals N] [--per-sec N] [--seconds N]
 *
 * Floors compared with (the issue): first full view within 3 s, under 30 % of a core while
 * updates flow. `...RatioToFloor` = floor / measured: 1 or more meets it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../helpers/broker.js';
import { killTree, spawnCli, waitForLine } from '../helpers/cli.js';
import { descendants, procFile } from '../helpers/procs.js';
import { has } from '../helpers/system.js';
import { launchChromium } from '../helpers/browser.js';
import { simulatedFleet } from './console-fleet-publisher.js';

const json = process.argv.includes('--json');
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const TERMINALS = arg('terminals', 1000);
const PER_SEC = arg('per-sec', 100);
const SECONDS = arg('seconds', 20);
const FIRST_VIEW_FLOOR_MS = 3000;
const CPU_FLOOR_PCT = 30;

if (!has('chromium')) {
  process.stderr.write('bench:console needs chromium (apt-get install chromium)\n');
  process.exit(2);
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) a process has used, 0 once it is gone. */
function cpuSeconds(pid: number): number {
  const stat = procFile(pid, 'stat');
  if (!stat) return 0;
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}
const isRenderer = (pid: number) => (procFile(pid, 'cmdline') ?? '').includes('--type=renderer');

const log = (s: string) => {
  if (!json) process.stdout.write(`${s}\n`);
};

// One folder for everything this run makes (the broker's, the console's, Chromium's profile),
// removed at the end: TMPDIR is read by each mkdtemp and inherited by the children.
const dir = mkdtempSync(join(tmpdir(), 'bench-console-'));
process.env.TMPDIR = dir;
const broker = await startBroker();
const fleet = await simulatedFleet({ url: broker.url, terminals: TERMINALS });
writeFileSync(join(dir, 'console.json'), JSON.stringify({ dataDir: dir }));
const consoleChild = spawnCli(
  ['console', '--config', join(dir, 'console.json'), '--secrets', join(dir, 'secrets.yaml'), '--mqtt', broker.url, '--port', '0'],
  { env: { EDGE_AGENT_LOG_LEVEL: 'warn' } },
);
let context: Awaited<ReturnType<typeof launchChromium>> | null = null;
try {
  await fleet.publishAll();
  const [, url] = (await waitForLine(consoleChild, /^console listening on (\S+) /, 60_000, 'stdout')) as unknown as [string, string];
  // The console has taken every retained terminal's state, info and metrics before the page is opened.
  for (const deadline = Date.now() + 60_000; ; ) {
    const body = (await (await fetch(new URL('/api/fleet', url))).json()) as {
      terminals: Array<{ metricsAt: number | null; version: string | null }>;
    };
    const complete = body.terminals.filter((t) => t.metricsAt !== null && t.version !== null).length;
    if (complete >= TERMINALS) break;
    if (Date.now() > deadline) throw new Error(`the console has the info and metrics of ${complete} of ${TERMINALS} terminals after 60 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const snapshotBytes = (await (await fetch(new URL('/api/fleet', url))).arrayBuffer()).byteLength;
  log(`console at ${url} knows ${TERMINALS} terminals (snapshot ${snapshotBytes} bytes)`);

  context = await launchChromium({ viewport: { width: 1600, height: 1000 } });
  const page = context.pages()[0] ?? (await context.newPage());
  // A first load warms Chromium itself (profile, compositor); the measured load is the second.
  await page.goto('about:blank');
  const started = Date.now();
  await page.goto(url);
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  const rendered = await page.evaluate(`document.querySelectorAll('tbody tr[data-key]').length`);
  // When the page had produced the frame with every row, on this machine's clock: the polling of
  // waitForSelector is not counted.
  const marks = (await page.evaluate('({ origin: performance.timeOrigin, view: window.__firstFullView })')) as {
    origin: number;
    view: number;
  };
  const firstViewMs = Math.round(marks.origin + marks.view - started);
  const pageFirstViewMs = Math.round(marks.view);
  if (rendered !== TERMINALS) throw new Error(`the page shows ${String(rendered)} rows, not ${TERMINALS}`);
  log(`first full view: ${firstViewMs} ms (page: ${pageFirstViewMs} ms after navigation start)`);

  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const taskSeconds = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
  const chromiumPids = () =>
    descendants(process.pid).filter(
      (p) => !descendants(consoleChild.pid!).includes(p) && p !== consoleChild.pid && (procFile(p, 'cmdline') ?? '').includes('chromium'),
    );
  const flow = fleet.flow(PER_SEC);
  await new Promise((r) => setTimeout(r, 2000)); // updates reach the page before measuring
  const pids0 = chromiumPids();
  const cpu0 = {
    task: await taskSeconds(),
    chromium: pids0.reduce((s, p) => s + cpuSeconds(p), 0),
    renderer: pids0.filter(isRenderer).reduce((s, p) => s + cpuSeconds(p), 0),
    server: cpuSeconds(consoleChild.pid!),
    rows: (await page.evaluate('window.__rowsApplied || 0')) as number,
    at: Date.now(),
  };
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const pids1 = chromiumPids();
  const cpu1 = {
    task: await taskSeconds(),
    chromium: pids1.reduce((s, p) => s + cpuSeconds(p), 0),
    renderer: pids1.filter(isRenderer).reduce((s, p) => s + cpuSeconds(p), 0),
    server: cpuSeconds(consoleChild.pid!),
    rows: (await page.evaluate('window.__rowsApplied || 0')) as number,
    at: Date.now(),
  };
  const sent = await flow.stop();
  const wall = (cpu1.at - cpu0.at) / 1000;
  const pct = (a: number, b: number) => Math.round(((b - a) / wall) * 1000) / 10;
  const rendererMainThreadPct = pct(cpu0.task, cpu1.task);
  const rendererProcessPct = pct(cpu0.renderer, cpu1.renderer);
  const chromiumPct = pct(cpu0.chromium, cpu1.chromium);
  const serverPct = pct(cpu0.server, cpu1.server);
  const ratio = (floor: number, v: number) => Math.round((floor / Math.max(v, 0.1)) * 100) / 100;
  const result = {
    terminals: TERMINALS,
    sites: Math.ceil(TERMINALS / 50),
    updatesPerSec: PER_SEC,
    updatesSent: sent,
    rowUpdatesAppliedByPage: cpu1.rows - cpu0.rows,
    measuredSeconds: Math.round(wall * 10) / 10,
    snapshotBytes,
    firstViewMs,
    pageFirstViewMs,
    firstViewFloorMs: FIRST_VIEW_FLOOR_MS,
    firstViewRatioToFloor: ratio(FIRST_VIEW_FLOOR_MS, firstViewMs),
    rendererMainThreadCpuPct: rendererMainThreadPct,
    rendererProcessCpuPct: rendererProcessPct,
    allChromiumProcessesCpuPct: chromiumPct,
    consoleServerCpuPct: serverPct,
    cpuFloorPct: CPU_FLOOR_PCT,
    rendererCpuRatioToFloor: ratio(CPU_FLOOR_PCT, rendererProcessPct),
    consoleServerCpuRatioToFloor: ratio(CPU_FLOOR_PCT, serverPct),
    broker: broker.kind,
    cores: cpus().length,
    loadAvg1: Math.round(loadavg()[0]! * 100) / 100,
  };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else log(JSON.stringify(result, null, 2));
} finally {
  await context?.close().catch(() => undefined);
  killTree(consoleChild);
  await fleet.close().catch(() => undefined);
  await broker.stop();
  rmSync(dir, { recursive: true, force: true });
}
