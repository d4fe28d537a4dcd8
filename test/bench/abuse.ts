/**
 * Benchmark: does a burst of bad secrets slow the service for everybody else?
 *
 * The real service runs as `edge-agent serve` (its own process, SQLite file, request log at
 * info). A measuring client on 127.0.0.2 reads one user (`GET /attendance/api/user?code=…`, a
 * bearer token, one SQLite read) one request after the other and records each latency: first
 * with the service idle, then while an attacker process on 127.0.0.1 keeps 64 keep-alive
 * connections busy posting `/oauth/token` with a real API key and wrong secrets, as fast as the
 * answers come back. Both phases run in one run, on the same service.
 *
 *   npm run bench:abuse -- --json            one JSON object on stdout
 *   --seconds N                              length of each phase (default 15)
 *
 * Floor: p99 under abuse ≤ 2 × the idle p99 (`ratio`, `ratioToFloor`). The attacker's answers
 * by status (429 rate-limited, 503 scrypt slots busy, 400 wrong secret) say how it was shed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { killTree } from '../helpers/cli.js';
import { startServiceProcess } from '../helpers/service.js';

const FLOOR = 2;
const CONNECTIONS = 64;
const args = process.argv.slice(2);
const json = args.includes('--json');
const seconds = Number(args[args.indexOf('--seconds') + 1]) || 15;

interface Reply {
  status: number;
  body: string;
}

function send(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  localAddress?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers, agent, ...(localAddress ? { localAddress } : {}) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// ---- the attacker (a child process of its own) ----------------------------------------------

async function attack(base: string, apiKey: string): Promise<void> {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const counts: Record<string, number> = {};
  let stop = false;
  process.on('message', (m) => {
    if (m === 'stop') stop = true;
  });
  const form = new URLSearchParams({ grant_type: 'password', username: apiKey, password: 'not-the-secret' }).toString();
  const headers = {
    authorization: `Basic ${Buffer.from('edge-agent:').toString('base64')}`,
    'content-type': 'application/x-www-form-urlencoded',
    'content-length': String(Buffer.byteLength(form)),
  };
  const loop = async () => {
    while (!stop) {
      const r = await send(agent, url, 'POST', '/oauth/token', headers, form).catch((e: NodeJS.ErrnoException) => ({
        status: 0,
        body: e.code ?? e.message,
      }));
      const k = r.status === 0 ? `error ${r.body}` : String(r.status);
      counts[k] = (counts[k] ?? 0) + 1;
    }
  };
  process.send!('started');
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  agent.destroy();
  process.send!(counts);
}

// ---- the measuring client and the run --------------------------------------------------------

/** CPU time a process has used so far (user + system, ms), from /proc; null elsewhere. */
function cpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
  } catch {
    return null;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(
  base: string,
  token: string,
  code: string,
  ms: number,
): Promise<{ requests: number; p50: number; p99: number; max: number; errors: number }> {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { authorization: `Bearer ${token}` };
  const lat: number[] = [];
  let errors = 0;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const t0 = performance.now();
    const r = await send(agent, url, 'GET', `/attendance/api/user?code=${encodeURIComponent(code)}`, headers, undefined, '127.0.0.2').catch(
      () => ({ status: 0, body: '' }),
    );
    if (r.status !== 200) errors++;
    else lat.push(performance.now() - t0);
  }
  agent.destroy();
  lat.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return { requests: lat.length, p50: round(percentile(lat, 50)), p99: round(percentile(lat, 99)), max: round(lat.at(-1)!), errors };
}

async function main(): Promise<void> {
  const service = await startServiceProcess({ extraArgs: [] });
  let attacker: ChildProcess | undefined;
  try {
    const url = new URL(service.url);
    const agent = new Agent({ keepAlive: false });
    const form = new URLSearchParams({ grant_type: 'password', username: service.apiKey, password: service.apiSecret }).toString();
    const tokenReply = await send(
      agent,
      url,
      'POST',
      '/oauth/token',
      {
        authorization: `Basic ${Buffer.from(`${service.clientId}:`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      form,
      '127.0.0.2',
    );
    const token = (JSON.parse(tokenReply.body) as { access_token: string }).access_token;
    const user = await send(
      agent,
      url,
      'POST',
      '/attendance/api/user',
      { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      JSON.stringify({ employeeCode: 'A1', firstName: 'Ada', lastName: 'Bench' }),
      '127.0.0.2',
    );
    if (user.status !== 200) throw new Error(`add user failed: ${user.status} ${user.body}`);

    await measure(service.url, token, 'A1', 1000); // warm-up
    const pid = service.child.pid;
    let cpu0 = cpuMs(pid);
    const idle = await measure(service.url, token, 'A1', seconds * 1000);
    const idleCpu = cpu0 === null ? null : cpuMs(pid)! - cpu0;

    attacker = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--attacker', service.url, service.apiKey], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      attacker!.once('message', () => resolve());
      attacker!.once('exit', (code) => reject(new Error(`the attacker exited (${code})`)));
    });
    await new Promise((r) => setTimeout(r, 2000)); // past the first bursts: the steady state
    cpu0 = cpuMs(pid);
    const underAbuse = await measure(service.url, token, 'A1', seconds * 1000);
    const abuseCpu = cpu0 === null ? null : cpuMs(pid)! - cpu0;
    const attempts = await new Promise<Record<string, number>>((resolve) => {
      attacker!.once('message', (m) => resolve(m as Record<string, number>));
      attacker!.send('stop');
    });
    const total = Object.values(attempts).reduce((a, b) => a + b, 0);
    const ratio = Math.round((underAbuse.p99 / idle.p99) * 100) / 100;
    const result = {
      bench: 'abuse',
      machine: { cpus: cpus().length, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
      phaseSeconds: seconds,
      connections: CONNECTIONS,
      idle: { ...idle, serviceCpuPct: idleCpu === null ? null : Math.round(idleCpu / seconds / 10) },
      underAbuse: { ...underAbuse, serviceCpuPct: abuseCpu === null ? null : Math.round(abuseCpu / seconds / 10) },
      attacker: { attempts: total, perSec: Math.round(total / (seconds + 2)), byStatus: attempts },
      ratio,
      floor: FLOOR,
      ratioToFloor: Math.round((ratio / FLOOR) * 100) / 100,
      withinFloor: ratio <= FLOOR,
    };
    if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      process.stdout.write(
        `idle p99 ${idle.p99} ms (p50 ${idle.p50}, ${idle.requests} requests; service CPU ${result.idle.serviceCpuPct} %)\n`,
      );
      process.stdout.write(
        `under abuse p99 ${underAbuse.p99} ms (p50 ${underAbuse.p50}, ${underAbuse.requests} requests; service CPU ${result.underAbuse.serviceCpuPct} %; attacker ${total} attempts: ${JSON.stringify(attempts)})\n`,
      );
      process.stdout.write(`ratio ${ratio} (floor ≤ ${FLOOR})\n`);
    }
  } finally {
    if (attacker && attacker.exitCode === null) killTree(attacker);
    await service.stop();
  }
}

if (args[0] === '--attacker') await attack(args[1]!, args[2]!);
else await main();
