/**
 * The drain at full size (`bench:scale`, section `drain`): a backlog of `punches` (default
 * 1,000,000) imported with the real `edge-agent punch --import`, drained by the real
 * `edge-agent run` (a child process) to the real attendance service (`edge-agent serve`, a child
 * process, HTTP on 127.0.0.1).
 *
 * The backlog: 2,000 employees, each day every one's check-in, then every one's check-out
 * (carrying its inTime). 10 % of the punches are of employees the service does not know: refused
 * with USER_NOT_AVAILABLE, dead letters. 1 % (check-ins of known employees) are refused by the
 * service's database the first two times it stores them (a trigger, RAISE(FAIL), installed from
 * a second connection the way test/integration/api-contract.test.ts makes the database refuse):
 * the service answers that item ERROR, the agent retries it after its backoff, and it goes. Two
 * requests, not two statements: the service stores a refused run again in halves, and every
 * statement of one request (its `updated_at`) that holds the item is refused alike.
 *
 * Measured:
 * - importPerSec: punches per second through `punch --import` (reading, checking, recording);
 * - bytesPerPunch: database pages in use after a WAL checkpoint, over the punches;
 * - statusMs: `Outbox.status()` on the full backlog, median of 5 (what `queue status` and the
 *   metrics pay);
 *   statusCliMs the whole `queue status --json` command (process start and tsx included);
 * - startMs: `run` from spawn to "edge-agent running" with the full backlog;
 * - sigtermMs: SIGTERM to exit of a `run` draining the full backlog (its budget: 5 s);
 * - drainEventsPerSec: punches settled (delivered or dead) per second by a second `run`, from
 *   "running" to nothing pending;
 * - recordOutcomesP95Ms: the p95 time to record one batch's outcomes, as `run` reports it in its
 *   metrics (`upload`, a window of the last 1,024 batches), read over the control socket every
 *   5 s: the worst window is reported (recordOutcomesP95MsLast the last one);
 * - rssMb: the peak RSS of that `run` while draining (from /proc), with the node flags of the
 *   systemd unit (DAEMON_NODE_FLAGS: the young generation capped).
 * `punch`, `queue` and `run` run as on a terminal: built (tsc) and started with node
 * (built-cli.ts); `--tsx` runs them from the sources.
 */
import { mkdtempSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { AttendanceClient } from '../../src/api/client.js';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { Outbox } from '../../src/store/outbox.js';
import { formatLocal } from '../../src/store/local-time.js';
import { waitForLine } from '../helpers/cli.js';
import { startServiceProcess } from '../helpers/service.js';
import { daemonStatus, outboxCounts, stopChild } from '../helpers/agent.js';
import { agentCli, type AgentCli } from './built-cli.js';
import { RssSampler, cpuMs, round } from './proc-sample.js';

export interface DrainOptions {
  punches?: number;
  /** How `punch`, `queue` and `run` are started (default: built, as on a terminal). */
  cli?: AgentCli;
  log?: (line: string) => void;
}

const EMPLOYEES = 2000;
/** Employees 0..KNOWN-1 are users of the service; the rest are unknown (their punches: dead letters, 10 %). */
const KNOWN = EMPLOYEES * 0.9;
/** A check-in of known employee e on day d is refused twice when (e + d) % FLAKY_EVERY === 0: 40 of 4,000 a day, 1 %. */
const FLAKY_EVERY = 45;
export const DRAIN_FLOORS = { drainEventsPerSec: 5000, recordOutcomesP95Ms: 50, rssMb: 150, sigtermMs: 5000 };

interface Punch {
  code: string;
  direction: 'in' | 'out';
  at: string;
  flaky: boolean;
}

function* backlog(n: number): Generator<Punch> {
  let made = 0;
  for (let day = 0; made < n; day++) {
    const base = Date.UTC(2024, 0, 1) + day * 86_400_000;
    for (const direction of ['in', 'out'] as const) {
      for (let e = 0; e < EMPLOYEES && made < n; e++, made++) {
        const hour = direction === 'in' ? 7 : 15;
        const at = formatLocal(base + hour * 3_600_000 + (e % 60) * 60_000 + 3_600_000, 60);
        yield { code: `S${e}`, direction, at, flaky: direction === 'in' && e < KNOWN && (e + day) % FLAKY_EVERY === 0 };
      }
    }
  }
}

async function until(cond: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 500): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Starts `run`; its log lines are read (and counted) so a full pipe never blocks it. */
async function startRun(cli: AgentCli, args: string[]): Promise<{ child: ChildProcess; startMs: number; lines: () => number }> {
  const t0 = performance.now();
  const child = cli.spawnDaemon(args, { EDGE_AGENT_LOG_LEVEL: 'info' });
  let lines = 0;
  // BENCH_SCALE_RUN_LOG=FILE keeps what `run` logs (for looking into a slow or stuck drain).
  const keep = process.env.BENCH_SCALE_RUN_LOG ? openSync(process.env.BENCH_SCALE_RUN_LOG, 'a') : null;
  const count = (d: Buffer) => {
    for (const b of d) if (b === 10) lines++;
    if (keep !== null) writeSync(keep, d);
  };
  child.stdout!.on('data', count);
  child.stderr!.on('data', count);
  await waitForLine(child, /edge-agent running/, 120_000);
  return { child, startMs: Math.round(performance.now() - t0), lines: () => lines };
}

export async function benchDrain(options: DrainOptions = {}): Promise<Record<string, unknown>> {
  const N = options.punches ?? 1_000_000;
  const log = options.log ?? (() => undefined);
  const cli = options.cli ?? agentCli({ log });
  const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-scale-'));
  const dataDir = join(dir, 'data');
  const service = await startServiceProcess();
  // The service logs each refused item (at error): read its output, or a full pipe stops it.
  service.child.stdout!.resume();
  service.child.stderr!.resume();
  let run: ChildProcess | null = null;
  try {
    const admin = new AttendanceClient({
      baseUrl: service.url,
      clientId: service.clientId,
      apiKey: service.apiKey,
      apiSecret: service.apiSecret,
      timeoutMs: 60_000,
    });
    log(`registering ${KNOWN} of ${EMPLOYEES} employees on the service`);
    for (let e = 0; e < KNOWN; e++) await admin.addOrUpdateUser({ employeeCode: `S${e}`, firstName: 'Scale', lastName: `Bench ${e}` });

    log(`writing the import file and the service's refusals (${N} punches)`);
    const file = join(dir, 'backlog.jsonl');
    const fd = openSync(file, 'w');
    const flaky: Array<[string, string]> = [];
    let lines: string[] = [];
    for (const p of backlog(N)) {
      lines.push(`{"code":"${p.code}","direction":"${p.direction}","at":"${p.at}","tz":60}`);
      if (p.flaky) flaky.push([p.code, p.at]);
      if (lines.length === 10_000) {
        writeSync(fd, `${lines.join('\n')}\n`);
        lines = [];
      }
    }
    if (lines.length) writeSync(fd, `${lines.join('\n')}\n`);
    closeSync(fd);
    const serviceDb = await SqliteDatabase.open(service.dbPath);
    await serviceDb.exec(`
      CREATE TABLE bench_flaky (employee_code TEXT NOT NULL, in_time TEXT NOT NULL, fails INTEGER NOT NULL, last_request TEXT, PRIMARY KEY (employee_code, in_time)) WITHOUT ROWID;
      CREATE TRIGGER bench_flaky_event BEFORE INSERT ON server_events
        WHEN (SELECT fails > 0 OR last_request IS NEW.updated_at FROM bench_flaky WHERE employee_code = NEW.employee_code AND in_time = NEW.in_time)
      BEGIN
        UPDATE bench_flaky SET fails = fails - 1, last_request = NEW.updated_at
          WHERE employee_code = NEW.employee_code AND in_time = NEW.in_time AND last_request IS NOT NEW.updated_at;
        SELECT RAISE(FAIL, 'refused by the benchmark: a passing fault');
      END;`);
    await serviceDb.transaction((db) =>
      db.run('INSERT INTO bench_flaky (employee_code, in_time, fails) SELECT value ->> 0, value ->> 1, 2 FROM json_each(?)', [
        JSON.stringify(flaky),
      ]),
    );

    const secretFile = join(dir, 'api-secret');
    writeFileSync(secretFile, service.apiSecret, { mode: 0o600 });
    const common = [
      '--data',
      dataDir,
      '--terminal',
      'gate-scale',
      '--api',
      service.url,
      '--client-id',
      service.clientId,
      '--api-key',
      service.apiKey,
      '--api-secret-file',
      secretFile,
    ];

    log('importing with edge-agent punch --import');
    const ti = performance.now();
    const imported = await cli.run(['punch', '--import', file, '--json', ...common], { timeoutMs: 3_600_000 });
    const importMs = performance.now() - ti;
    if (imported.code !== 0) throw new Error(`punch --import failed: ${imported.stderr}`);
    rmSync(file);

    // Bytes on disk per punch, and status() on the full backlog, with no agent running.
    const db = await openAgentDatabase(dataDir);
    await db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const pragma = async (name: string) => (await db.all<Record<string, number>>(`PRAGMA ${name}`))[0]![name]!;
    const bytesPerPunch = Math.round((((await pragma('page_count')) - (await pragma('freelist_count'))) * (await pragma('page_size'))) / N);
    const outbox = await Outbox.open(db);
    const statusRuns: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await outbox.status();
      statusRuns.push(performance.now() - t);
    }
    await db.close();
    const tc = performance.now();
    const statusCli = await cli.run(['queue', 'status', '--json', ...common], { timeoutMs: 120_000 });
    const statusCliMs = Math.round(performance.now() - tc);
    if (statusCli.code !== 0 || (JSON.parse(statusCli.stdout) as { pending: number }).pending !== N)
      throw new Error(`queue status did not show the backlog: ${statusCli.stdout}${statusCli.stderr}`);

    // A run that starts on the full backlog and is stopped while it drains it.
    log('run on the full backlog, then SIGTERM while it drains');
    const first = await startRun(cli, common);
    run = first.child;
    await until(async () => (await outboxCounts(dataDir)).pending <= N - Math.min(20_000, N / 10), 600_000, 'the first deliveries');
    const pendingAtSigterm = (await outboxCounts(dataDir)).pending;
    const ts = performance.now();
    const firstExit = await stopChild(run);
    const sigtermMs = Math.round(performance.now() - ts);
    run = null;

    // The drain: a second run, to nothing pending.
    log('run again: the drain');
    const before = await outboxCounts(dataDir);
    const second = await startRun(cli, common);
    run = second.child;
    const rss = new RssSampler(run.pid!, 200);
    const cpu0 = cpuMs(run.pid!) ?? 0;
    const t0 = performance.now();
    const p95s: number[] = [];
    const poll = setInterval(() => {
      void daemonStatus(dataDir).then(
        (s) => {
          const upload = s.metrics.upload as { recordOutcomesP95Ms: number | null } | null;
          if (upload?.recordOutcomesP95Ms != null) p95s.push(upload.recordOutcomesP95Ms);
        },
        () => undefined,
      );
    }, 5000);
    let progress = 0;
    await until(
      async () => {
        const c = await outboxCounts(dataDir);
        if (c.delivered + c.dead - progress >= N / 10) {
          progress = c.delivered + c.dead;
          log(`  ${progress} of ${N} settled, run RSS ${rss.lastMb} MB`);
        }
        return c.pending === 0;
      },
      3_600_000,
      'the drain',
      250,
    );
    const drainMs = performance.now() - t0;
    clearInterval(poll);
    const final = await daemonStatus(dataDir);
    const upload = final.metrics.upload as {
      recordOutcomesP95Ms: number | null;
      recordOutcomesMaxMs: number | null;
      batches: number;
      retried: number;
      dead: number;
      delivered: number;
    };
    if (upload.recordOutcomesP95Ms !== null) p95s.push(upload.recordOutcomesP95Ms);
    const cpuDrainMs = (cpuMs(run.pid!) ?? 0) - cpu0;
    rss.stop();
    const secondExit = await stopChild(run);
    run = null;

    const after = await outboxCounts(dataDir);
    const settled = after.delivered + after.dead - (before.delivered + before.dead);
    const events = await serviceDb.get<{ n: number; closed: number }>('SELECT COUNT(*) AS n, COUNT(out_time) AS closed FROM server_events');
    const refused = await serviceDb.get<{ n: number }>('SELECT COUNT(*) AS n FROM bench_flaky WHERE fails < 2');
    await serviceDb.close();
    const recordOutcomesP95Ms = Math.max(...p95s);
    const drainEventsPerSec = Math.round((settled * 1000) / drainMs);
    return {
      runtime: cli.runtime,
      punches: N,
      importPerSec: Math.round((N * 1000) / importMs),
      importMs: Math.round(importMs),
      bytesPerPunch,
      statusMs: round([...statusRuns].sort((a, b) => a - b)[2]!, 2),
      statusMaxMs: round(Math.max(...statusRuns), 2),
      statusCliMs,
      startMs: second.startMs,
      startFullBacklogMs: first.startMs,
      sigtermMs,
      sigtermPendingPunches: pendingAtSigterm,
      sigtermExitCode: firstExit,
      drainEventsPerSec,
      drainMs: Math.round(drainMs),
      drainedPunches: settled,
      recordOutcomesP95Ms,
      recordOutcomesP95MsLast: upload.recordOutcomesP95Ms,
      recordOutcomesMaxMs: upload.recordOutcomesMaxMs,
      batches: upload.batches,
      rssMb: rss.peakMb,
      rssMedianMb: rss.samples.length ? [...rss.samples].sort((a, b) => a - b)[Math.floor(rss.samples.length / 2)] : null,
      cpuPerEventUs: round((cpuDrainMs * 1000) / Math.max(1, settled), 1),
      deadLetters: after.dead,
      retriedItems: upload.retried,
      refusedByServiceItems: refused?.n ?? 0,
      serviceEvents: events?.n ?? 0,
      serviceEventsClosed: events?.closed ?? 0,
      exitCode: secondExit,
      floors: DRAIN_FLOORS,
      ratioToFloor: {
        drainEventsPerSec: round(drainEventsPerSec / DRAIN_FLOORS.drainEventsPerSec, 2),
        recordOutcomesP95Ms: round(DRAIN_FLOORS.recordOutcomesP95Ms / Math.max(recordOutcomesP95Ms, 0.1), 2),
        rssMb: round(DRAIN_FLOORS.rssMb / Math.max(rss.peakMb, 1), 2),
        sigtermMs: round(DRAIN_FLOORS.sigtermMs / Math.max(sigtermMs, 1), 2),
      },
    };
  } finally {
    if (run) await stopChild(run);
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
