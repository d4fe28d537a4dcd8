/**
 * Benchmark of the attendance service: events per second stored through the real client over
 * loopback HTTP into a real SQLite file (WAL, synchronous=FULL), with batches of 1, 100 and 1000
 * events. A batch is one transaction, so the fsync per commit is shared by the whole batch.
 * Five interleaved rounds per batch size; each figure is the median of its rounds.
 *
 *   npm run bench:api -- --json       one JSON object on stdout
 *
 * Floor compared with: batch-1000 rate ≥ 20 × batch-1 rate (`ratio`, `ratioToFloor`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { AttendanceClient } from '../../src/api/client.js';
import { formatDateTime } from '../../src/api/date-time.js';
import type { AttendanceEvent } from '../../src/api/types.js';
import { setLogLevel } from '../../src/core/logger.js';
import { createAttendanceService } from '../../src/server/service.js';

const FLOOR = 20;
const EMPLOYEES = 200;
const json = process.argv.includes('--json');

setLogLevel('server:*', process.env.BENCH_SERVER_LOG === '1' ? 'info' : 'warn');
setLogLevel('api:*', 'warn');

const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-api-'));
const service = createAttendanceService({ dbPath: join(dir, 'service.db') });
const key = await service.createApiKey('admin');
const url = await service.listen(0, '127.0.0.1');
const client = new AttendanceClient({
  baseUrl: url,
  clientId: 'edge-agent',
  apiKey: key.apiKey,
  apiSecret: key.apiSecret,
  timeoutMs: 60_000,
});

for (let i = 0; i < EMPLOYEES; i++) await client.addOrUpdateUser({ employeeCode: `B${i}`, firstName: 'Bench', lastName: `No ${i}` });

let clock = Date.UTC(2024, 0, 1, 0, 0, 0);
function nextEvents(n: number): AttendanceEvent[] {
  const out: AttendanceEvent[] = [];
  for (let i = 0; i < n; i++) {
    clock += 1000;
    out.push({ employeeCode: `B${i % EMPLOYEES}`, inTime: formatDateTime(clock), tzOffset: 0 });
  }
  return out;
}

await client.addEvents(nextEvents(10)); // warm-up: token, connection, statements

async function rate(
  batchSize: number,
  totalEvents: number,
): Promise<{ eventsPerSec: number; requests: number; events: number; ms: number }> {
  const requests = Math.max(1, Math.round(totalEvents / batchSize));
  const batches = Array.from({ length: requests }, () => nextEvents(batchSize));
  const started = process.hrtime.bigint();
  for (const b of batches) {
    const env = await client.addEvents(b);
    if (env.statusCode !== 'SUCCESS' || env.returnValue!.some((i) => i.statusCode !== 'SUCCESS'))
      throw new Error(`batch refused: ${JSON.stringify(env).slice(0, 300)}`);
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { eventsPerSec: Math.round((requests * batchSize * 1000) / ms), requests, events: requests * batchSize, ms: Math.round(ms) };
}

try {
  // Interleaved rounds, median per batch size: the machine is shared, a single run is noise.
  const ROUNDS = 5;
  const plan = [
    { size: 1, events: 100 },
    { size: 100, events: 1000 },
    { size: 1000, events: 3000 },
  ];
  const samples = new Map<number, number[]>(plan.map((p) => [p.size, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of plan) samples.get(p.size)!.push((await rate(p.size, p.events)).eventsPerSec);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const summary = (size: number) => ({ eventsPerSec: median(samples.get(size)!), samples: samples.get(size)! });
  const b1 = summary(1);
  const b100 = summary(100);
  const b1000 = summary(1000);
  const ratio = Math.round((b1000.eventsPerSec / b1.eventsPerSec) * 10) / 10;
  const result = {
    benchmark: 'api',
    batch1EventsPerSec: b1.eventsPerSec,
    batch100EventsPerSec: b100.eventsPerSec,
    batch1000EventsPerSec: b1000.eventsPerSec,
    ratio,
    floor: FLOOR,
    ratioToFloor: Math.round((ratio / FLOOR) * 100) / 100,
    rounds: ROUNDS,
    samples: { batch1: b1.samples, batch100: b100.samples, batch1000: b1000.samples },
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
    cpus: cpus().length,
    node: process.version,
  };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      `events/s  batch 1: ${b1.eventsPerSec}   batch 100: ${b100.eventsPerSec}   batch 1000: ${b1000.eventsPerSec}\n` +
        `ratio batch-1000 / batch-1: ${ratio} (floor ${FLOOR})   load ${result.loadavg.join(' ')}\n`,
    );
  }
} finally {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
