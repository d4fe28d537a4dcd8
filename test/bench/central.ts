/**
 * The central side at fleet scale: 1,000 simulated terminals publish punches (QoS 1, the payload
 * of src/upload/mqtt-sink.ts) at a set rate through one broker (Mosquitto where present, aedes
 * otherwise), 3 `edge-agent ingest` processes share them and write them through 3 `edge-agent
 * serve` replicas into one PostgreSQL (durable: fsync and synchronous commit on). Two runs: a
 * steady one, and one where an ingest process is killed with SIGKILL midway and started again
 * with the same client id 1 s later (what systemd's Restart= does).
 *
 * Per run: end-to-end events/s (events / (last commit in PostgreSQL − first publish), commit
 * times from track_commit_timestamp), p50/p95 from publish to stored per check-in (the row's
 * created_at, set by the request that first stored it, just before its COMMIT; the ingests'
 * histogram of recordedAt → the API's answer is given beside it, redelivered copies included),
 * and lost and doubled events counted against PostgreSQL: every published check-in must be one
 * row, every check-out must have closed its row, and no other row may exist.
 *
 *   npm run bench:central -- --json [--rate 6000] [--seconds 20] [--terminals 1000] [--connections 4] [--terminal-procs 4]
 *
 * Floor compared with: ≥ 5,000 events/s end to end in both runs, zero lost, zero doubled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { createApiKey } from '../../src/server/auth.js';
import { openServiceDatabase } from '../../src/server/service.js';
import { freePort, mosquittoPath, startBroker, type TestBroker } from '../helpers/broker.js';
import { killTree, ROOT, spawnCli, waitForLine } from '../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { descendants } from '../helpers/procs.js';
import type { TerminalsDone, TerminalsRun } from './central-terminals.js';

const FLOOR = 5000;
const args = process.argv.slice(2);
const json = args.includes('--json');
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const RATE = arg('rate', 6000);
const SECONDS = arg('seconds', 20);
const TERMINALS = arg('terminals', 1000);
const CONNECTIONS = arg('connections', 4);
const TERMINAL_PROCS = arg('terminal-procs', 4);
const INGESTS = 3;
const REPLICAS = 3;
const EMPLOYEES_PER_TERMINAL = 5;
const RESTART_AFTER_MS = 1000;
const PREFIX = 'fleet';

const say = (s: string) => {
  if (!json) process.stderr.write(`${s}\n`);
};

// ---- the parts ---------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-central-'));
const children = new Set<ChildProcess>();
let pgServer: TestPostgres | undefined;
let broker: TestBroker | undefined;
let mosquitto: ChildProcess | undefined;

async function cleanup(): Promise<void> {
  for (const c of children) killTree(c);
  if (mosquitto) killTree(mosquitto);
  await broker?.stop().catch(() => undefined);
  await pgServer?.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

/** Mosquitto tuned for the fleet: no cap on queued messages (a restarting ingest's sessions fill up), many connections. */
async function startFleetBroker(): Promise<{ url: string; kind: 'mosquitto' | 'aedes' }> {
  const bin = mosquittoPath();
  if (!bin) {
    broker = await startBroker({ prefer: 'aedes' });
    return { url: broker.url, kind: 'aedes' };
  }
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'max_queued_messages 0',
      'max_inflight_messages 500',
      'max_connections -1',
      'set_tcp_nodelay true',
      '',
    ].join('\n'),
  );
  // 1,000 terminals and the ingests' connections need more descriptors than a default 1024.
  mosquitto = spawn('/bin/sh', ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" -c "$1"', bin, conf], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { connectTimeout: 1000, reconnectPeriod: 0 }).then(
      (c) => c.endAsync().then(() => true),
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('mosquitto did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `mqtt://127.0.0.1:${port}`, kind: 'mosquitto' };
}

/** Log lines of the children by level, and the last few: a child whose pipe is not read blocks on its next write. */
const childLog = { warn: 0, error: 0, last: [] as string[] };
function drain(child: ChildProcess, name: string): void {
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const level = /"level":"(\w+)"/.exec(line)?.[1];
        if (level === 'warn') childLog.warn++;
        if (level === 'error' || level === 'fatal') childLog.error++;
        if (level === 'warn' || level === 'error' || level === 'fatal')
          childLog.last = [...childLog.last.slice(-(Number(process.env.BENCH_LOG_LINES ?? 5) - 1)), `${name}: ${line.slice(0, 300)}`];
      }
    });
  }
}

async function startServe(url: string, keyFile: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnCli(['serve', '--port', '0', '--db', url], {
    env: { EDGE_AGENT_BIOMETRIC_KEY_FILE: keyFile, EDGE_AGENT_LOG_LEVEL: 'warn' },
  });
  children.add(child);
  const [, base] = await waitForLine(child, /listening on (http:\/\/\S+)/, 60_000, 'stdout');
  drain(child, 'serve');
  return { url: base!, child };
}

interface IngestProc {
  index: number;
  child: ChildProcess;
  metricsUrl: string;
}

async function startIngest(
  index: number,
  mqttUrl: string,
  apiUrl: string,
  apiKey: string,
  secretFile: string,
  share: boolean,
): Promise<IngestProc> {
  const child = spawnCli(
    [
      'ingest',
      '--mqtt',
      mqttUrl,
      '--api',
      apiUrl,
      '--api-key',
      apiKey,
      '--api-secret-file',
      secretFile,
      '--prefix',
      PREFIX,
      '--mqtt-client-id',
      `bench-ingest-${index}`,
      '--connections',
      String(share ? CONNECTIONS : 1),
      '--metrics-port',
      '0',
      '--secrets',
      join(dir, 'none.yaml'),
      ...(share ? [] : ['--no-share']),
    ],
    { env: { EDGE_AGENT_LOG_LEVEL: 'warn' } },
  );
  children.add(child);
  const [, metricsUrl] = await waitForLine(child, /metrics on (http:\/\/\S+)\/metrics/, 60_000, 'stdout');
  drain(child, `ingest ${index}`);
  return { index, child, metricsUrl: metricsUrl! };
}

// ---- the terminals -----------------------------------------------------------------------

interface Published {
  employee: string;
  inTime: string;
  /** The check-out's time, for an out. */
  outTime: string | null;
  /** When the terminal published it (ms). */
  at: number;
}

/** The terminals, spread over child processes (test/bench/central-terminals.ts): one event loop for 1,000 clients is the bottleneck. */
class Fleet {
  readonly #procs: Array<{ child: ChildProcess; terminals: number }> = [];
  readonly published: Published[] = [];
  failures = 0;

  get terminals(): number {
    return this.#procs.reduce((s, p) => s + p.terminals, 0);
  }

  async connect(url: string): Promise<void> {
    const per = Math.ceil(TERMINALS / TERMINAL_PROCS);
    for (let from = 0; from < TERMINALS; from += per) {
      const to = Math.min(TERMINALS, from + per);
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(ROOT, 'test/bench/central-terminals.ts'),
          url,
          PREFIX,
          String(from),
          String(to),
          String(EMPLOYEES_PER_TERMINAL),
        ],
        {
          cwd: ROOT,
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        },
      );
      children.add(child);
      this.#procs.push({ child, terminals: to - from });
    }
    await Promise.all(
      this.#procs.map(
        ({ child }) =>
          new Promise<void>((resolve, reject) => {
            child.once('exit', (code) => reject(new Error(`a terminals process exited with ${code} before it was ready`)));
            child.on('message', (m: { type: string }) => m.type === 'ready' && resolve());
          }),
      ),
    );
  }

  /** Publishes `total` punches at `rate` per second over all terminals; resolves when the broker acknowledged all. */
  async run(total: number, rate: number, day: string, onHalf: () => void): Promise<{ firstPublishAt: number; lastPublishAt: number }> {
    const sent = new Map<ChildProcess, number>();
    let halfDone = false;
    const shares = this.#procs.map(({ terminals }) => Math.round((total * terminals) / TERMINALS));
    shares[shares.length - 1]! += total - shares.reduce((a, b) => a + b, 0);
    const results = await Promise.all(
      this.#procs.map(
        ({ child, terminals }, i) =>
          new Promise<TerminalsDone>((resolve) => {
            const onMessage = (m: { type: 'progress'; sent: number } | TerminalsDone) => {
              if (m.type === 'progress') {
                sent.set(child, m.sent);
                if (!halfDone && [...sent.values()].reduce((a, b) => a + b, 0) >= total / 2) {
                  halfDone = true;
                  onHalf();
                }
              } else {
                child.off('message', onMessage);
                resolve(m);
              }
            };
            child.on('message', onMessage);
            const run: TerminalsRun = { type: 'run', total: shares[i]!, rate: (rate * terminals) / TERMINALS, day };
            child.send(run);
          }),
      ),
    );
    for (const r of results) {
      for (const [employee, inTime, outTime, at] of r.published) this.published.push({ employee, inTime, outTime, at });
      this.failures += r.retries;
    }
    return {
      firstPublishAt: Math.min(...results.map((r) => r.firstPublishAt)),
      lastPublishAt: Math.max(...results.map((r) => r.lastPublishAt)),
    };
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#procs.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.send({ type: 'close' });
          }),
      ),
    );
  }
}

// ---- measuring -----------------------------------------------------------------------------

interface Histo {
  buckets: Map<number, number>;
  count: number;
}

async function scrape(metricsUrl: string): Promise<{ text: string } | undefined> {
  try {
    return { text: await (await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(2000) })).text() };
  } catch {
    return undefined;
  }
}

function histogram(text: string, name: string): Histo {
  const buckets = new Map<number, number>();
  let count = 0;
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`).exec(line);
    if (m && m[1] !== '+Inf') buckets.set(Number(m[1]), Number(m[2]));
    const c = new RegExp(`^${name}_count (\\d+)`).exec(line);
    if (c) count = Number(c[1]);
  }
  return { buckets, count };
}

function counter(text: string, name: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
}

/** Quantile of summed cumulative histograms, linear inside the bucket. */
function quantile(hs: Histo[], q: number): number | null {
  const bounds = [...new Set(hs.flatMap((h) => [...h.buckets.keys()]))].sort((a, b) => a - b);
  const total = hs.reduce((s, h) => s + h.count, 0);
  if (total === 0) return null;
  const target = q * total;
  let prevBound = 0;
  let prevCum = 0;
  for (const b of bounds) {
    const cum = hs.reduce((s, h) => s + (h.buckets.get(b) ?? 0), 0);
    if (cum >= target) return prevBound + ((b - prevBound) * (target - prevCum)) / Math.max(1, cum - prevCum);
    prevBound = b;
    prevCum = cum;
  }
  return bounds[bounds.length - 1] ?? null;
}

/** CPU seconds used so far by a process and its descendants (utime + stime from /proc). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  let ticks = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* gone */
    }
  }
  return ticks / 100;
}

// ---- a run -----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  say(
    `starting PostgreSQL, the broker, ${REPLICAS} serve replicas, ${INGESTS} ingests, ${TERMINALS} terminals (load ${loadBefore.join(' ')})`,
  );
  pgServer = await startPostgres({
    durable: true,
    settings: { track_commit_timestamp: 'on', shared_buffers: '128MB', max_wal_size: '1GB' },
  });
  const dbUrl = await pgServer.createDatabase('central');
  const dbName = new URL(dbUrl).pathname.slice(1);
  const keyFile = join(dir, 'biometric.key');
  writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const store = await openServiceDatabase(dbUrl);
  const key = await createApiKey(store, 'admin');
  await store.close();
  // Setup, not measured: the employees the punches are for.
  await pgServer.query(
    dbName,
    `INSERT INTO server_users (employee_code, first_name, last_name, status, created_at, updated_at)
       SELECT 'E' || g, 'Bench', 'No ' || g, '0', now()::text, now()::text FROM generate_series(0, $1::int - 1) g`,
    [TERMINALS * EMPLOYEES_PER_TERMINAL],
  );
  const secretFile = join(dir, 'api-secret');
  writeFileSync(secretFile, key.apiSecret, { mode: 0o600 });
  const brokerInfo = await startFleetBroker();
  const share = brokerInfo.kind === 'mosquitto';
  const replicas = await Promise.all(Array.from({ length: REPLICAS }, () => startServe(dbUrl, keyFile)));
  const ingestCount = share ? INGESTS : 1;
  const ingests: IngestProc[] = await Promise.all(
    Array.from({ length: ingestCount }, (_, i) =>
      startIngest(i, brokerInfo.url, replicas[i % REPLICAS]!.url, key.apiKey, secretFile, share),
    ),
  );
  const fleet = new Fleet();
  await fleet.connect(brokerInfo.url);
  say(`${fleet.terminals} terminals connected to ${brokerInfo.kind} from ${TERMINAL_PROCS} processes`);

  const total = Math.round(RATE * SECONDS);
  // Warm-up, not measured: compiled code paths, connections, the database's caches.
  const warm = Math.round(Math.min(total / 10, RATE * 3));
  say(`warm-up: ${warm} punches`);
  await fleet.run(warm, RATE, '2024-12-31', () => undefined);
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const [c] = await pgServer.query<{ n: string }>(
      dbName,
      "SELECT COUNT(*) + COUNT(out_time) AS n FROM server_events WHERE in_time LIKE '2024-12-31%'",
    );
    if (Number(c!.n) >= warm) break;
  }
  const runs: Record<string, unknown> = {};
  for (const [name, day, kill] of [
    ['steady', '2025-01-01', false],
    ['ingestKilled', '2025-01-02', true],
  ] as const) {
    // Metrics are cumulative per process: a run's share is the difference to the start.
    const last = new Map<string, string>();
    const startTexts = new Map<string, string>();
    for (const ing of ingests) {
      const s = await scrape(ing.metricsUrl);
      if (s) startTexts.set(ing.metricsUrl, s.text);
    }
    const scraper = setInterval(() => {
      for (const ing of ingests) void scrape(ing.metricsUrl).then((s) => s && last.set(ing.metricsUrl, s.text));
    }, 250);
    const cpuBefore = {
      serve: replicas.reduce((s, r) => s + cpuSeconds(r.child.pid), 0),
      ingest: new Map(ingests.map((i) => [i.child.pid, cpuSeconds(i.child.pid)])),
      broker: cpuSeconds(mosquitto?.pid),
      postgres: cpuSeconds(pgServer.pid),
      terminals: [...children]
        .filter((c) => (c.spawnargs ?? []).some((a) => a.endsWith('central-terminals.ts')))
        .reduce((sum, c) => sum + cpuSeconds(c.pid), 0),
      bench: process.cpuUsage(),
    };
    let killedAt: number | null = null;
    let heldAtKill: number | null = null;
    const onHalf = () => {
      if (!kill) return;
      const victim = ingests[1 % ingests.length]!;
      killedAt = Date.now();
      // What the victim held unacknowledged at its last scrape (≤ 250 ms before): these must come back.
      heldAtKill = last.has(victim.metricsUrl) ? counter(last.get(victim.metricsUrl)!, 'ingest_pending_events') : null;
      killTree(victim.child);
      children.delete(victim.child);
      say(`  SIGKILL ingest ${victim.index} at half; restarting it in ${RESTART_AFTER_MS} ms with the same client id`);
      setTimeout(() => {
        void startIngest(victim.index, brokerInfo.url, replicas[victim.index % REPLICAS]!.url, key.apiKey, secretFile, share).then(
          (fresh) => {
            ingests[ingests.indexOf(victim)] = fresh;
          },
        );
      }, RESTART_AFTER_MS);
    };
    say(`${name}: ${total} punches at ${RATE}/s`);
    const { firstPublishAt, lastPublishAt } = await fleet.run(total, RATE, day, onHalf);
    const published = fleet.published.filter((p) => p.inTime.startsWith(day));
    const expectedIns = published.filter((p) => p.outTime === null).length;
    const expectedOuts = published.length - expectedIns;
    // Wait until PostgreSQL has every event (or nothing more comes for 60 s).
    let rows = 0;
    let closed = 0;
    let lastChange = Date.now();
    for (;;) {
      const [c] = await pgServer.query<{ n: string; closed: string }>(
        dbName,
        'SELECT COUNT(*) AS n, COUNT(out_time) AS closed FROM server_events WHERE in_time LIKE $1',
        [`${day}%`],
      );
      const [n, cl] = [Number(c!.n), Number(c!.closed)];
      if (n !== rows || cl !== closed) lastChange = Date.now();
      [rows, closed] = [n, cl];
      if ((rows >= expectedIns && closed >= expectedOuts) || Date.now() - lastChange > 60_000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    clearInterval(scraper);
    await new Promise((r) => setTimeout(r, 600));
    for (const ing of ingests) {
      const s = await scrape(ing.metricsUrl);
      if (s) last.set(ing.metricsUrl, s.text);
    }
    const [{ at }] = (await pgServer.query<{ at: Date }>(
      dbName,
      'SELECT max(pg_xact_commit_timestamp(xmin)) AS at FROM server_events WHERE in_time LIKE $1',
      [`${day}%`],
    )) as [{ at: Date }];
    const lastCommitAt = at.getTime();
    // Lost and doubled, by counting against what was published.
    const stored = await pgServer.query<{ employee_code: string; in_time: string; out_time: string | null; created_at: string }>(
      dbName,
      'SELECT employee_code, in_time, out_time, created_at FROM server_events WHERE in_time LIKE $1',
      [`${day}%`],
    );
    const byKey = new Map<string, string | null>();
    const createdAt = new Map<string, number>();
    let doubled = 0;
    for (const r of stored) {
      const k = `${r.employee_code}|${r.in_time}`;
      if (byKey.has(k)) doubled++;
      byKey.set(k, r.out_time);
      createdAt.set(k, Date.parse(r.created_at));
    }
    // Publish → stored, per check-in: created_at is set by the request that first stored the row
    // (a replay does not change it), just before its COMMIT; check-outs update a row and leave no
    // time of their own. The ingests' histogram (below) counts redelivered copies again.
    const checkInMs = published
      .filter((p) => p.outTime === null && createdAt.has(`${p.employee}|${p.inTime}`))
      .map((p) => createdAt.get(`${p.employee}|${p.inTime}`)! - p.at)
      .sort((a, b) => a - b);
    const pct = (q: number) =>
      checkInMs.length ? Math.max(0, checkInMs[Math.min(checkInMs.length - 1, Math.floor(q * checkInMs.length))]!) : null;
    let lost = 0;
    const expectedKeys = new Set<string>();
    for (const p of published) {
      const k = `${p.employee}|${p.inTime}`;
      expectedKeys.add(k);
      if (!byKey.has(k) || (p.outTime !== null && byKey.get(k) !== p.outTime)) lost++;
    }
    const extra = [...byKey.keys()].filter((k) => !expectedKeys.has(k)).length;
    doubled += extra;
    // Per run: histograms and counters minus what the same processes had at the start.
    const diff = (url: string, text: string, name: string) =>
      counter(text, name) - (startTexts.has(url) ? counter(startTexts.get(url)!, name) : 0);
    const runHistos = [...last].map(([url, text]) => {
      const h = histogram(text, 'ingest_lag_seconds');
      const before = startTexts.has(url)
        ? histogram(startTexts.get(url)!, 'ingest_lag_seconds')
        : { buckets: new Map<number, number>(), count: 0 };
      return { buckets: new Map([...h.buckets].map(([b, n]) => [b, n - (before.buckets.get(b) ?? 0)])), count: h.count - before.count };
    });
    const seconds = (lastCommitAt - firstPublishAt) / 1000;
    const bench = process.cpuUsage(cpuBefore.bench);
    const result = {
      published: published.length,
      checkIns: expectedIns,
      checkOuts: expectedOuts,
      rowsStored: rows,
      rowsClosed: closed,
      lost,
      doubled,
      eventsPerSec: Math.round(published.length / seconds),
      offeredPerSec: Math.round(published.length / ((lastPublishAt - firstPublishAt) / 1000)),
      firstPublishToLastCommitMs: Math.round(seconds * 1000),
      lastPublishToLastCommitMs: lastCommitAt - lastPublishAt,
      publishToCommittedMs: {
        p50: pct(0.5),
        p95: pct(0.95),
        p99: pct(0.99),
        samples: checkInMs.length,
        what: 'check-ins: publish to the row stored (created_at, before COMMIT)',
      },
      publishToAcceptedMsAsIngestsSawIt: {
        p50: ms(quantile(runHistos, 0.5)),
        p95: ms(quantile(runHistos, 0.95)),
        p99: ms(quantile(runHistos, 0.99)),
        samples: runHistos.reduce((s, h) => s + h.count, 0),
      },
      ingest: {
        accepted: [...last].reduce((s, [u, t]) => s + diff(u, t, 'ingest_events_accepted_total'), 0),
        duplicatesDropped: [...last].reduce((s, [u, t]) => s + diff(u, t, 'ingest_duplicates_dropped_total'), 0),
        redelivered: [...last].reduce((s, [u, t]) => s + diff(u, t, 'ingest_messages_redelivered_total'), 0),
        apiRequests: [...last].reduce((s, [u, t]) => s + diff(u, t, 'ingest_api_requests_total'), 0),
        deadLetters: [...last].reduce((s, [u, t]) => s + diff(u, t, 'ingest_dead_letters_total'), 0),
        apiFailures: [...last].reduce((s, [u, t]) => s + diff(u, t, 'ingest_api_failures_total'), 0),
        perProcess: [...last].map(([u, t]) => ({
          accepted: diff(u, t, 'ingest_events_accepted_total'),
          redelivered: diff(u, t, 'ingest_messages_redelivered_total'),
        })),
      },
      publishRetries: fleet.failures,
      cpuSeconds: {
        serveReplicas: round1(replicas.reduce((s, r) => s + cpuSeconds(r.child.pid), 0) - cpuBefore.serve),
        // (a killed process's seconds are gone with it)
        ingests: round1(ingests.reduce((s, i) => s + cpuSeconds(i.child.pid) - (cpuBefore.ingest.get(i.child.pid) ?? 0), 0)),
        broker: round1(cpuSeconds(mosquitto?.pid) - cpuBefore.broker),
        postgres: round1(cpuSeconds(pgServer.pid) - cpuBefore.postgres),
        terminals: round1(
          [...children]
            .filter((c) => (c.spawnargs ?? []).some((a) => a.endsWith('central-terminals.ts')))
            .reduce((sum, c) => sum + cpuSeconds(c.pid), 0) - cpuBefore.terminals,
        ),
        bench: round1((bench.user + bench.system) / 1e6),
      },
      ...(killedAt !== null
        ? { killedAtMs: killedAt - firstPublishAt, restartedAfterMs: RESTART_AFTER_MS, heldUnacknowledgedAtKill: heldAtKill }
        : {}),
      loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
    };
    runs[name] = result;
    say(`  ${result.eventsPerSec} events/s end to end, p95 ${result.publishToCommittedMs.p95} ms, lost ${lost}, doubled ${doubled}`);
  }
  await fleet.close();
  const steady = runs.steady as { eventsPerSec: number; lost: number; doubled: number };
  const killed = runs.ingestKilled as { eventsPerSec: number; lost: number; doubled: number };
  const worst = Math.min(steady.eventsPerSec, killed.eventsPerSec);
  const out = {
    benchmark: 'central',
    terminals: TERMINALS,
    terminalProcesses: TERMINAL_PROCS,
    offeredRatePerSec: RATE,
    eventsPerRun: total,
    broker: brokerInfo.kind,
    ingests: ingestCount,
    ingestConnections: share ? CONNECTIONS : 1,
    serveReplicas: REPLICAS,
    database: 'PostgreSQL (fsync, synchronous_commit on)',
    warmUpEvents: warm,
    runs,
    floor: { eventsPerSec: FLOOR, lost: 0, doubled: 0 },
    childLogLines: childLog,
    ratioToFloor: Math.round((worst / FLOOR) * 100) / 100,
    meetsFloor: worst >= FLOOR && steady.lost + killed.lost + steady.doubled + killed.doubled === 0,
    loadavgBefore: loadBefore,
    cpus: cpus().length,
    node: process.version,
  };
  if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

function ms(seconds: number | null): number | null {
  return seconds === null ? null : Math.round(seconds * 1000);
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

try {
  await main();
} finally {
  await cleanup();
}
process.exit(0);
