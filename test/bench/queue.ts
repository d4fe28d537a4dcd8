/**
 * Benchmark of the outbox and its drain.
 *
 * - Durable punches: `Outbox.record` one transaction each (WAL, synchronous=FULL): commits per
 *   second and p50/p95 commit latency, beside the disk's own fsync latency measured in the same
 *   run (fs.fsyncSync of a 4 KiB write to a temp file in the same folder).
 * - Drain: a 100,000-punch backlog (1,000 employees, check-ins and check-outs) delivered by the
 *   real Uploader + API sink to the real attendance service (`edge-agent serve`, a child process on
 *   loopback), batches of 200 (`drainEventsPerSec`). RSS of this process (the agent side) while
 *   draining: `rssGrowthMb` is the peak minus the RSS once the first 5,000 were delivered (steady
 *   state: does memory grow with the backlog?), `rssGrowthFromStartMb` the peak minus the RSS at
 *   the start (includes V8 growing its young generation to its default 3 × 16 MB under load).
 * - The ratio: three interleaved rounds of one event per request (300 events) and batches of 200
 *   (10,000 events) on the same service; `drainRatio` = median batched / median one-per-request.
 * - Bytes on disk per punch of the backlog (database pages after a WAL checkpoint).
 *
 *   npm run bench:queue -- --json       one JSON object on stdout
 *
 * Floors compared with: drain ≥ 5,000 events/s, ≥ 30 × the one-per-request rate, RSS growth < 50 MB.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttendanceClient } from '../../src/api/client.js';
import { setLogLevel } from '../../src/core/logger.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { Outbox, type PunchInput } from '../../src/store/outbox.js';
import { formatLocal } from '../../src/store/local-time.js';
import { ApiSink } from '../../src/upload/api-sink.js';
import { Uploader } from '../../src/upload/uploader.js';
import { startServiceProcess } from '../helpers/service.js';
import { progress } from '../../src/cli/progress.js';

const json = process.argv.includes('--json');
const BACKLOG = Number(process.env.BENCH_QUEUE_BACKLOG ?? 100_000);
const EMPLOYEES = 1000;
const COMMITS = 300;
const ONE_PER_REQUEST = 300;
const RATIO_BATCHED = 10_000;
const ROUNDS = 3;
const FLOORS = { drainEventsPerSec: 5000, drainRatio: 30, rssGrowthMb: 50 };

setLogLevel('*', 'warn');

const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-queue-'));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
};
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * `n` punches, generated lazily: per day every employee's check-in, then every check-out
 * (carrying its inTime), as a terminal records them. Lazy so the bench itself does not hold a
 * 100,000-object array (that would inflate the heap V8 sizes itself for during the drain).
 */
function* punches(n: number, offsetDays = 0): Generator<PunchInput> {
  let made = 0;
  for (let day = 0; made < n; day++) {
    const base = Date.UTC(2025, 0, 1) + (day + offsetDays) * 86_400_000;
    for (const direction of ['in', 'out'] as const) {
      for (let e = 0; e < EMPLOYEES && made < n; e++, made++) {
        const inTime = formatLocal(base + 7 * 3_600_000 + (e % 60) * 60_000, 60);
        const localTime = direction === 'in' ? inTime : formatLocal(base + 15 * 3_600_000 + (e % 60) * 60_000, 60);
        yield {
          employeeCode: `Q${e}`,
          direction,
          localTime,
          ...(direction === 'out' ? { inTime } : {}),
          tzOffset: 60,
          source: 'finger',
          score: 80,
          terminalId: 'bench-1',
        };
      }
    }
  }
}

/** Records `n` punches, one transaction per thousand (as `punch --import` does). */
async function recordBacklog(outbox: Outbox, n: number, offsetDays = 0): Promise<void> {
  const bar = progress(`recording ${n} punches`, { total: n, unit: 'punches' }); // stderr, on a terminal only
  let chunk: PunchInput[] = [];
  let done = 0;
  for (const p of punches(n, offsetDays)) {
    chunk.push(p);
    if (chunk.length === 1000) {
      await outbox.recordMany(chunk);
      done += chunk.length;
      bar.update(done);
      chunk = [];
    }
  }
  if (chunk.length) await outbox.recordMany(chunk);
  bar.finish();
}

interface DrainResult {
  eventsPerSec: number;
  events: number;
  ms: number;
  /** Peak RSS minus RSS once the first `WARMUP_EVENTS` were delivered (steady state). */
  rssGrowthMb: number;
  /** Peak RSS minus RSS at the start of the drain (includes V8 growing its young generation). */
  rssGrowthFromStartMb: number;
}

const WARMUP_EVENTS = 5000;
const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

async function drain(outbox: Outbox, sinkClient: AttendanceClient, batchSize: number): Promise<DrainResult> {
  const total = (await outbox.status()).pending;
  const uploader = new Uploader({
    outbox,
    sinks: [new ApiSink(sinkClient)],
    batchSize,
    idlePollMs: 5,
    backoffBaseMs: 50,
    backoffCapMs: 500,
  });
  let errors = 0;
  uploader.on('error', () => errors++);
  const rss0 = process.memoryUsage().rss;
  let rssMax = rss0;
  const m0 = process.memoryUsage();
  let peak = m0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    if (rssWarm !== null) rssMaxWarm = Math.max(rssMaxWarm, m.rss);
    if (m.rss > rssMax) {
      rssMax = m.rss;
      peak = m;
    }
  }, 50);
  let delivered = 0;
  let rssWarm: number | null = null;
  let rssMaxWarm = 0;
  const bar = progress(`draining (batches of ${batchSize})`, { total, unit: 'punches' });
  const finished = new Promise<void>((resolve) =>
    uploader.on('delivered', (e) => {
      delivered += e.count;
      bar.update(delivered);
      const rss = process.memoryUsage().rss;
      if (rssWarm === null && delivered >= Math.min(WARMUP_EVENTS, total / 10)) rssWarm = rss;
      if (rssWarm !== null) rssMaxWarm = Math.max(rssMaxWarm, rss);
      if (delivered >= total) resolve();
    }),
  );
  const t0 = process.hrtime.bigint();
  await uploader.start();
  await finished;
  const elapsed = ms(t0);
  if ((await outbox.status()).pending !== 0) throw new Error('the drain ended with punches still pending');
  await uploader.stop();
  bar.finish();
  clearInterval(sampler);
  if (process.env.BENCH_QUEUE_DEBUG) {
    const v8 = await import('node:v8');
    const vm = await import('node:vm');
    v8.setFlagsFromString('--expose-gc');
    (vm.runInNewContext('gc') as () => void)();
    process.stderr.write(
      `memory at start ${JSON.stringify(m0)}\nmemory at peak ${JSON.stringify(peak)}\nafter gc ${JSON.stringify(process.memoryUsage())}\n`,
    );
  }
  if (errors) process.stderr.write(`note: ${errors} whole-request failures during the drain (retried)\n`);
  return {
    eventsPerSec: Math.round((total * 1000) / elapsed),
    events: total,
    ms: Math.round(elapsed),
    rssGrowthMb: mb(Math.max(0, rssMaxWarm - (rssWarm ?? rss0))),
    rssGrowthFromStartMb: mb(rssMax - rss0),
  };
}

const service = await startServiceProcess();
try {
  const admin = new AttendanceClient({
    baseUrl: service.url,
    clientId: service.clientId,
    apiKey: service.apiKey,
    apiSecret: service.apiSecret,
    timeoutMs: 60_000,
  });
  for (let e = 0; e < EMPLOYEES; e++) await admin.addOrUpdateUser({ employeeCode: `Q${e}`, firstName: 'Queue', lastName: `Bench ${e}` });

  // 1. Durable commits, one transaction each, and the disk's own fsync.
  const db = await openAgentDatabase(join(dir, 'agent'));
  const outbox = await Outbox.open(db, { maxPending: 10_000_000 });
  const commitLat: number[] = [];
  const probe = [...punches(COMMITS, 3000)];
  const tc = process.hrtime.bigint();
  for (const p of probe) {
    const t = process.hrtime.bigint();
    await outbox.record(p);
    commitLat.push(ms(t));
  }
  const commitsPerSec = Math.round((COMMITS * 1000) / ms(tc));
  const fsyncLat: number[] = [];
  const fd = openSync(join(dir, 'agent', 'fsync-probe'), 'w');
  const buf = Buffer.alloc(4096, 7);
  for (let i = 0; i < 200; i++) {
    writeSync(fd, buf, 0, buf.length, (i % 16) * 4096);
    const t = process.hrtime.bigint();
    fsyncSync(fd);
    fsyncLat.push(ms(t));
  }
  closeSync(fd);

  // 2. Batched against one event per request (the tools we are compared with), interleaved
  //    rounds on the same service; the ratio is of the medians (the machine is shared).
  const sinkClient = new AttendanceClient({
    baseUrl: service.url,
    clientId: service.clientId,
    apiKey: service.apiKey,
    apiSecret: service.apiSecret,
    timeoutMs: 60_000,
  });
  await sinkClient.getToken();
  const ratioDb = await openAgentDatabase(join(dir, 'ratio'));
  const ratioOutbox = await Outbox.open(ratioDb, { maxPending: 10_000_000 });
  const oneSamples: number[] = [];
  const batchedSamples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await recordBacklog(ratioOutbox, ONE_PER_REQUEST, 2000 + round * 10);
    oneSamples.push((await drain(ratioOutbox, sinkClient, 1)).eventsPerSec);
    await recordBacklog(ratioOutbox, RATIO_BATCHED, 2100 + round * 20);
    batchedSamples.push((await drain(ratioOutbox, sinkClient, 200)).eventsPerSec);
  }
  await ratioDb.close();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const one = { eventsPerSec: median(oneSamples), events: ONE_PER_REQUEST };

  // 3. The 100,000-punch backlog: bytes on disk, then the batched drain.
  await outbox.purge({ delivered: true });
  await db.transaction((d) => d.run('DELETE FROM outbox_events'));
  const tb = process.hrtime.bigint();
  await recordBacklog(outbox, BACKLOG);
  const backlogRecordMs = Math.round(ms(tb));
  await db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const pages = (await db.all<{ page_count: number }>('PRAGMA page_count'))[0]!.page_count;
  const free = (await db.all<{ freelist_count: number }>('PRAGMA freelist_count'))[0]!.freelist_count;
  const pageSize = (await db.all<{ page_size: number }>('PRAGMA page_size'))[0]!.page_size;
  const bytesPerEvent = Math.round(((pages - free) * pageSize) / BACKLOG);
  const batched = await drain(outbox, sinkClient, 200);
  await db.close();

  const drainRatio = Math.round((median(batchedSamples) / one.eventsPerSec) * 10) / 10;
  const result = {
    benchmark: 'queue',
    commitsPerSec,
    commitP50Ms: pct(commitLat, 50),
    commitP95Ms: pct(commitLat, 95),
    fsyncP50Ms: pct(fsyncLat, 50),
    fsyncP95Ms: pct(fsyncLat, 95),
    drainEventsPerSec: batched.eventsPerSec,
    drainOnePerRequestEventsPerSec: one.eventsPerSec,
    drainRatio,
    bytesPerEvent,
    rssGrowthMb: batched.rssGrowthMb,
    rssGrowthFromStartMb: batched.rssGrowthFromStartMb,
    ratioRounds: { onePerRequestEventsPerSec: oneSamples, batchedEventsPerSec: batchedSamples },
    backlogEvents: BACKLOG,
    backlogRecordMs,
    drainMs: batched.ms,
    batchSize: 200,
    onePerRequestEvents: one.events,
    floors: FLOORS,
    ratioToFloor: {
      drainEventsPerSec: Math.round((batched.eventsPerSec / FLOORS.drainEventsPerSec) * 100) / 100,
      drainRatio: Math.round((drainRatio / FLOORS.drainRatio) * 100) / 100,
      rssGrowthMb: Math.round((FLOORS.rssGrowthMb / Math.max(batched.rssGrowthMb, 0.1)) * 100) / 100,
    },
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
    cpus: cpus().length,
    node: process.version,
  };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      `durable punches: ${commitsPerSec}/s, commit p50 ${result.commitP50Ms} ms p95 ${result.commitP95Ms} ms (disk fsync p50 ${result.fsyncP50Ms} ms p95 ${result.fsyncP95Ms} ms)\n` +
        `drain of ${BACKLOG}: ${batched.eventsPerSec} events/s (floor ${FLOORS.drainEventsPerSec}); one per request: ${one.eventsPerSec} events/s; ratio ${drainRatio} (floor ${FLOORS.drainRatio})\n` +
        `${bytesPerEvent} bytes/event on disk; RSS growth while draining ${batched.rssGrowthMb} MB (floor < ${FLOORS.rssGrowthMb})   load ${result.loadavg.join(' ')}\n`,
    );
  }
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
