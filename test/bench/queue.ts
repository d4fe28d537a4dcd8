/**
 * Benchmark of the outbox and its drain.
 *
 * - Durable punches: `Outbox.record` one transaction each (WAL, synchronous=FULL): commits per
 *   second and p50/p95 commit latency, beside the disk's own fsync latency measured in the same
 *   run (fs.fsyncSync of a 4 KiB write to a temp file in the same folder).
 * - Drain: a 100,000-punch backlog (1,000 employees, check-ins and check-outs) delivered by the
 *   real Uploader + API sink to the real attendance service (`edge-agent serve`, a child process on
 *   loopback), batches of 200; the same with one event per request (on a smaller backlog), and
 *   the ratio. RSS of this process (the agent side) sampled while draining.
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

const json = process.argv.includes('--json');
const BACKLOG = Number(process.env.BENCH_QUEUE_BACKLOG ?? 100_000);
const EMPLOYEES = 1000;
const COMMITS = 300;
const ONE_PER_REQUEST = 600;
const FLOORS = { drainEventsPerSec: 5000, drainRatio: 30, rssGrowthMb: 50 };

setLogLevel('*', 'warn');

const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-queue-'));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
};
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Punches of `n` events: per employee alternating check-in and check-out, one pair per day. */
function backlog(n: number, offsetDays = 0): PunchInput[] {
  const out: PunchInput[] = [];
  for (let k = 0; out.length < n; k++) {
    const pair = Math.floor(k / EMPLOYEES);
    const e = k % EMPLOYEES;
    const dayStart = Date.UTC(2025, 0, 1) + (pair + offsetDays) * 86_400_000 + (e % 60) * 60_000;
    const inTime = formatLocal(dayStart + 7 * 3_600_000, 60);
    out.push({ employeeCode: `Q${e}`, direction: 'in', localTime: inTime, tzOffset: 60, source: 'finger', score: 80, terminalId: 'bench-1' });
    if (out.length < n) out.push({ employeeCode: `Q${e}`, direction: 'out', localTime: formatLocal(dayStart + 15 * 3_600_000, 60), inTime, tzOffset: 60, source: 'finger', score: 80, terminalId: 'bench-1' });
  }
  // Recording order: by day, then employee (what a terminal sees): ins of the day, then outs.
  return out.sort((a, b) => (a.localTime < b.localTime ? -1 : a.localTime > b.localTime ? 1 : 0));
}

async function drain(outbox: Outbox, sinkClient: AttendanceClient, batchSize: number): Promise<{ eventsPerSec: number; events: number; ms: number; rssGrowthMb: number }> {
  const total = (await outbox.status()).pending;
  const uploader = new Uploader({ outbox, sinks: [new ApiSink(sinkClient)], batchSize, idlePollMs: 5, backoffBaseMs: 50, backoffCapMs: 500 });
  let errors = 0;
  uploader.on('error', () => errors++);
  const rss0 = process.memoryUsage().rss;
  let rssMax = rss0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 50);
  const t0 = process.hrtime.bigint();
  let done = false;
  uploader.on('delivered', () => undefined);
  await uploader.start();
  while (!done) {
    await new Promise((r) => setTimeout(r, 20));
    done = (await outbox.status()).pending === 0;
  }
  const elapsed = ms(t0);
  await uploader.stop();
  clearInterval(sampler);
  if (errors) process.stderr.write(`note: ${errors} whole-request failures during the drain (retried)\n`);
  return { eventsPerSec: Math.round((total * 1000) / elapsed), events: total, ms: Math.round(elapsed), rssGrowthMb: Math.round(((rssMax - rss0) / 1048576) * 10) / 10 };
}

const service = await startServiceProcess();
try {
  const admin = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret, timeoutMs: 60_000 });
  for (let e = 0; e < EMPLOYEES; e++) await admin.addOrUpdateUser({ employeeCode: `Q${e}`, firstName: 'Queue', lastName: `Bench ${e}` });

  // 1. Durable commits, one transaction each, and the disk's own fsync.
  const db = await openAgentDatabase(join(dir, 'agent'));
  const outbox = await Outbox.open(db, { maxPending: 10_000_000 });
  const commitLat: number[] = [];
  const probe = backlog(COMMITS, 3000);
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

  // 2. One event per request (the tools we are compared with): a smaller backlog, same service.
  const onePerRequestOutbox = await Outbox.open(await openAgentDatabase(join(dir, 'one')), { maxPending: 10_000_000 });
  await onePerRequestOutbox.recordMany(backlog(ONE_PER_REQUEST, 2000));
  const sinkClient = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret, timeoutMs: 60_000 });
  await sinkClient.getToken();
  const one = await drain(onePerRequestOutbox, sinkClient, 1);
  await onePerRequestOutbox.db.close();

  // 3. The 100,000-punch backlog: bytes on disk, then the batched drain.
  await outbox.purge({ delivered: true });
  await db.transaction((d) => d.run('DELETE FROM outbox_events'));
  const tb = process.hrtime.bigint();
  await outbox.recordMany(backlog(BACKLOG));
  const backlogRecordMs = Math.round(ms(tb));
  await db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const pages = (await db.all<{ page_count: number }>('PRAGMA page_count'))[0]!.page_count;
  const free = (await db.all<{ freelist_count: number }>('PRAGMA freelist_count'))[0]!.freelist_count;
  const pageSize = (await db.all<{ page_size: number }>('PRAGMA page_size'))[0]!.page_size;
  const bytesPerEvent = Math.round(((pages - free) * pageSize) / BACKLOG);
  const batched = await drain(outbox, sinkClient, 200);
  await db.close();

  const drainRatio = Math.round((batched.eventsPerSec / one.eventsPerSec) * 10) / 10;
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
