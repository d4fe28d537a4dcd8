/**
 * `npm run bench:fleet -- [--json] [--terminals N] [--rate N] [--seconds S] [--tsx]`
 *
 * `edge-agent fleet --watch --json` (built, run with node, a child process) against a real
 * broker (Mosquitto where it is installed, else aedes in this process) holding the retained
 * state, info and metrics of 10,000 simulated terminals (console-fleet-publisher.ts, the simulated
 * fleet the console's benchmark uses too):
 * - firstViewMs: spawn to the first view on stdout, which waits until the broker has delivered
 *   every retained message (`complete`, `firstViewTerminals`); cpuFirstViewMs and
 *   rssFirstViewMb of the fleet process then;
 * - watch: `rate` changes a second for `seconds` with a reader that keeps up: lines printed,
 *   peak RSS, CPU per change;
 * - slowReader: the same while nobody reads the fleet's stdout (the pipe stays full): peak RSS
 *   (bounded: changes are coalesced per terminal), then SIGTERM with the reader still away:
 *   stopMs until the process is gone;
 * - rssMb: the peak RSS of the fleet process over all of it (floor < 200 MB).
 * Prints one JSON object with the figures and the ratios to the floors, and the load average.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { startBroker } from '../helpers/broker.js';
import { agentCli, eachLine } from './built-cli.js';
import { simulatedFleet, type SimulatedFleet } from './console-fleet-publisher.js';
import { RssSampler, cpuMs, round } from './proc-sample.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    terminals: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    tsx: { type: 'boolean', default: false },
  },
  strict: true,
});
const TERMINALS = Number(values.terminals ?? 10_000);
const RATE = Number(values.rate ?? 2000);
const SECONDS = Number(values.seconds ?? 10);
const FLOORS = { rssMb: 200 };
const log = (line: string) => process.stderr.write(`${line}\n`);
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

const loadBefore = load();
const cli = agentCli({ sources: values.tsx, log });
const broker = await startBroker();
let fleet: ChildProcess | null = null;
let sim: SimulatedFleet | null = null;
/** `perSec` changes a second for `seconds` (metrics with moving queues, one in fifty a state change); returns how many. */
const publishChanges = async (perSec: number, seconds: number) => {
  const flow = sim!.flow(perSec, 50);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return flow.stop();
};
try {
  const prefix = 'benchfleet';
  log(`publishing ${TERMINALS} terminals to ${broker.kind}`);
  sim = await simulatedFleet({ url: broker.url, prefix, terminals: TERMINALS, perSite: 100 });
  const tp = performance.now();
  await sim.publishAll();
  const published = { messages: 3 * TERMINALS, ms: Math.round(performance.now() - tp) };

  log('fleet --watch --json: first view');
  const t0 = performance.now();
  fleet = cli.spawn(['fleet', '--watch', '--json', '--mqtt', broker.url, '--prefix', prefix]);
  const child = fleet;
  const rss = new RssSampler(child.pid!, 100);
  child.stderr!.resume();
  let lines = 0;
  let firstView: { terminals: unknown[]; complete: boolean; retained: number; repaired: number; waitedMs: number } | null = null;
  let firstViewMs = 0;
  let onFirst: () => void = () => undefined;
  const gotFirst = new Promise<void>((r) => (onFirst = r));
  eachLine(child.stdout!, (line) => {
    if (!firstView) {
      firstViewMs = Math.round(performance.now() - t0);
      firstView = JSON.parse(line) as typeof firstView;
      onFirst();
    } else lines++;
  });
  await Promise.race([gotFirst, exited(child).then(() => Promise.reject(new Error('fleet exited before its first view')))]);
  const cpuFirstViewMs = cpuMs(child.pid!) ?? 0;
  const rssFirstViewMb = rss.sample() ?? rss.lastMb;

  log(`watch: ${RATE} changes/s for ${SECONDS} s, reader keeping up`);
  const cpuW0 = cpuMs(child.pid!) ?? 0;
  const linesBefore = lines;
  const peakBeforeWatch = rss.peakMb;
  const sentWatch = await publishChanges(RATE, SECONDS);
  await new Promise((r) => setTimeout(r, 1000));
  const watch = {
    changes: sentWatch,
    lines: lines - linesBefore,
    cpuPerChangeUs: round((((cpuMs(child.pid!) ?? 0) - cpuW0) * 1000) / Math.max(1, sentWatch), 1),
    rssPeakMb: Math.max(rss.peakMb, peakBeforeWatch),
  };

  log(`slow reader: ${RATE} changes/s for ${SECONDS} s, nobody reading`);
  child.stdout!.pause();
  const slowSamples: number[] = [];
  const slowSampler = setInterval(() => {
    const mb = rss.sample();
    if (mb !== null) slowSamples.push(mb);
  }, 100);
  const sentSlow = await publishChanges(RATE, SECONDS);
  clearInterval(slowSampler);
  const ts = performance.now();
  child.kill('SIGTERM');
  await exited(child);
  const stopMs = Math.round(performance.now() - ts);
  rss.stop();
  fleet = null;
  const slowReader = { changes: sentSlow, rssPeakMb: Math.max(...slowSamples), stopMs, stopWithReaderAway: true };
  const rssMb = rss.peakMb;
  const result = {
    benchmark: 'fleet',
    runtime: cli.runtime,
    broker: broker.kind,
    terminals: TERMINALS,
    retainedPublished: published.messages,
    publishMs: published.ms,
    firstViewMs,
    firstViewTerminals: firstView!.terminals.length,
    complete: firstView!.complete,
    retainedDelivered: firstView!.retained,
    retainedAskedAgain: firstView!.repaired,
    cpuFirstViewMs,
    rssFirstViewMb,
    watch,
    slowReader,
    rssMb,
    floors: FLOORS,
    ratioToFloor: { rssMb: round(FLOORS.rssMb / Math.max(rssMb, 1), 2) },
    loadAverageBefore: loadBefore,
    loadAverageAfter: load(),
    cpus: cpus().length,
    node: process.version,
  };
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
} finally {
  if (fleet && fleet.exitCode === null) fleet.kill('SIGKILL');
  await sim?.close();
  await broker.stop();
}
