/**
 * Benchmark: does one abusive client slow the service for everybody else? Two cases, each its
 * own idle and abuse phases taken in turn (`--rounds`, so that what other programs do to the
 * machine meanwhile falls on both sides alike), on one service:
 *
 * - **token**: an attacker process on 127.0.0.1 keeps 64 keep-alive connections busy posting
 *   `/oauth/token` with a real API key and wrong secrets, as fast as the answers come back;
 * - **flood** (issue 28): an attacker process on 127.0.0.3 opens 600 connections, each sending a
 *   request whose headers never end, and opens a new one whenever the service closes one.
 *
 * The real service runs as `edge-agent serve` (its own process, SQLite file, request log at
 * info). A measuring client on 127.0.0.2 reads one user (`GET /attendance/api/user?code=…`, a
 * bearer token, one SQLite read) one request after the other and records each latency. In the
 * token case it keeps one connection alive; in the flood case each request is a new connection
 * (another client arriving), so connecting and being accepted while the flood holds its sockets
 * are part of each latency.
 *
 *   npm run bench:abuse -- --json            one JSON object on stdout (both cases)
 *   --case token | --case flood              one case only
 *   --flood                                  the same as --case flood
 *   --seconds N                              measured time on each side, idle and under abuse (default 15)
 *   --rounds N                               idle and abuse phases taken in turn, N of each (default 3)
 *
 * Floor, each case: p99 under abuse ≤ 2 × the idle p99 of its idle phases (`ratio`, `ratioToFloor`),
 * with every measured request answered 200 (`errors`: 0; `withinFloor` says both).
 * The token case's top-level fields are as before; the flood case is under `flood`. How the
 * attackers were answered says how the abuse was shed (token: 429 rate-limited, 503 scrypt slots
 * busy, 400 wrong secret; flood: connections opened, 503s read, closed without one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { killTree } from '../helpers/cli.js';
import { startServiceProcess } from '../helpers/service.js';

const FLOOR = 2;
const CONNECTIONS = 64;
const FLOOD_SOCKETS = 600;
const FLOOD_FROM = '127.0.0.3';
const args = process.argv.slice(2);
const json = args.includes('--json');
const seconds = Number(args[args.indexOf('--seconds') + 1]) || 15;
const rounds = Math.max(1, Math.floor(Number(args[args.indexOf('--rounds') + 1]) || 3));
const only = args.includes('--flood') ? 'flood' : args.includes('--case') ? args[args.indexOf('--case') + 1] : null;
if (only !== null && only !== 'token' && only !== 'flood') {
  process.stderr.write(`--case takes token or flood, got ${only}\n`);
  process.exit(2);
}

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

/** The flood: `FLOOD_SOCKETS` connections from FLOOD_FROM sending headers that never end, each reopened when closed. */
async function flood(base: string): Promise<void> {
  const url = new URL(base);
  const counts = { opened: 0, answered503: 0, closedWithout503: 0, errors: 0 };
  let stop = false;
  const open = new Set<Socket>();
  process.on('message', (m) => {
    if (m !== 'stop') return;
    stop = true;
    for (const s of open) s.destroy();
    process.send!(counts);
  });
  const one = () => {
    if (stop) return;
    const s = connect({ port: Number(url.port), host: url.hostname, localAddress: FLOOD_FROM });
    counts.opened++;
    open.add(s);
    let answered = false;
    s.on('connect', () => s.write(`GET /attendance/api/user?code=A HTTP/1.1\r\nHost: ${url.host}\r\nX-Pad: `));
    s.on('data', (d: Buffer) => {
      if (!answered && d.toString('latin1').startsWith('HTTP/1.1 503')) {
        answered = true;
        counts.answered503++;
      }
    });
    s.on('error', () => void counts.errors++);
    s.on('close', () => {
      open.delete(s);
      if (!answered && !stop) counts.closedWithout503++;
      setImmediate(one);
    });
  };
  for (let i = 0; i < FLOOD_SOCKETS; i++) one();
  process.send!('started');
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

/** Latencies (ms) of one phase's answered requests, and how many were not answered 200. */
interface Samples {
  lat: number[];
  errors: number;
}

async function measure(base: string, token: string, code: string, ms: number, fresh: boolean): Promise<Samples> {
  const url = new URL(base);
  // fresh: a new connection for every request (another client), else one kept alive.
  const agent = new Agent({ keepAlive: !fresh, maxSockets: 1 });
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
  return { lat, errors };
}

function summarize(samples: Samples[]): { requests: number; p50: number; p99: number; max: number; errors: number } {
  const lat = samples.flatMap((s) => s.lat).sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    requests: lat.length,
    p50: round(percentile(lat, 50)),
    p99: round(percentile(lat, 99)),
    max: round(lat.at(-1)!),
    errors: samples.reduce((n, s) => n + s.errors, 0),
  };
}

type Measured = ReturnType<typeof summarize>;

interface PhasePair {
  idle: Measured & { serviceCpuPct: number | null };
  underAbuse: Measured & { serviceCpuPct: number | null };
  /** The attackers' counts, summed over the rounds. */
  attacker: Record<string, number>;
  /** The attacker process's CPU during the measured abuse phases (% of one core): it shares the machine. */
  attackerCpuPct: number | null;
  ratio: number;
  floor: number;
  ratioToFloor: number;
  withinFloor: boolean;
}

/**
 * `rounds` rounds of an idle phase then one with a new attacker child (`mode`: --attacker or
 * --flooder) running, each phase `seconds / rounds` long. Interleaved so that the load other
 * programs put on the machine meanwhile falls on both sides alike; the percentiles are over all
 * of a side's requests.
 */
async function idleThenAbuse(
  service: { url: string; child: ChildProcess; apiKey: string },
  token: string,
  mode: '--attacker' | '--flooder',
): Promise<PhasePair> {
  const pid = service.child.pid;
  const fresh = mode === '--flooder';
  const phaseMs = (seconds * 1000) / rounds;
  const idle: Samples[] = [];
  const underAbuse: Samples[] = [];
  const cpu = { idle: 0, abuse: 0, attacker: 0, known: true };
  const counts: Record<string, number> = {};
  /** CPU used (ms) by `of` while `run` runs; null where /proc cannot say. */
  const cpuWhile = async <T>(of: Array<number | undefined>, run: () => Promise<T>): Promise<[T, Array<number | null>]> => {
    const before = of.map(cpuMs);
    const value = await run();
    return [value, of.map((p, i) => (before[i] === null ? null : cpuMs(p)! - before[i]!))];
  };
  await measure(service.url, token, 'A1', 1000, fresh); // warm-up
  for (let round = 0; round < rounds; round++) {
    const [calm, [calmCpu]] = await cpuWhile([pid], () => measure(service.url, token, 'A1', phaseMs, fresh));
    idle.push(calm);
    if (calmCpu === null) cpu.known = false;
    else cpu.idle += calmCpu;
    const attacker = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), mode, service.url, service.apiKey], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        attacker.once('message', () => resolve());
        attacker.once('exit', (code) => reject(new Error(`the attacker exited (${code})`)));
      });
      await new Promise((r) => setTimeout(r, 2000)); // past the first bursts: the steady state
      const [hit, [serviceCpu, attackerCpu]] = await cpuWhile([pid, attacker.pid], () => measure(service.url, token, 'A1', phaseMs, fresh));
      underAbuse.push(hit);
      if (serviceCpu === null || attackerCpu === null) cpu.known = false;
      else {
        cpu.abuse += serviceCpu;
        cpu.attacker += attackerCpu;
      }
      const got = await new Promise<Record<string, number>>((resolve) => {
        attacker.once('message', (m) => resolve(m as Record<string, number>));
        attacker.send('stop');
      });
      for (const [k, n] of Object.entries(got)) counts[k] = (counts[k] ?? 0) + n;
    } finally {
      if (attacker.exitCode === null) killTree(attacker);
    }
    await new Promise((r) => setTimeout(r, 3000)); // the refused connections drain before the next idle phase
  }
  const calm = summarize(idle);
  const hit = summarize(underAbuse);
  const ratio = Math.round((hit.p99 / calm.p99) * 100) / 100;
  const pct = (ms: number) => (cpu.known ? Math.round(ms / seconds / 10) : null);
  return {
    idle: { ...calm, serviceCpuPct: pct(cpu.idle) },
    underAbuse: { ...hit, serviceCpuPct: pct(cpu.abuse) },
    attacker: counts,
    attackerCpuPct: pct(cpu.attacker),
    ratio,
    floor: FLOOR,
    ratioToFloor: Math.round((ratio / FLOOR) * 100) / 100,
    // A request refused or dropped is not a fast one: the floor holds only when every one was answered.
    withinFloor: ratio <= FLOOR && hit.errors === 0,
  };
}

function say(name: string, r: PhasePair, attack: string): void {
  process.stdout.write(
    `${name}: idle p99 ${r.idle.p99} ms (p50 ${r.idle.p50}, ${r.idle.requests} requests; service CPU ${r.idle.serviceCpuPct} %)\n`,
  );
  process.stdout.write(
    `${name}: under ${attack} p99 ${r.underAbuse.p99} ms (p50 ${r.underAbuse.p50}, ${r.underAbuse.requests} requests, ${r.underAbuse.errors} errors; service CPU ${r.underAbuse.serviceCpuPct} %; attacker ${JSON.stringify(r.attacker)})\n`,
  );
  process.stdout.write(`${name}: ratio ${r.ratio} (floor ≤ ${FLOOR}, ${r.ratioToFloor} of it)\n`);
}

async function main(): Promise<void> {
  const service = await startServiceProcess({ extraArgs: [] });
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

    const tokenCase = only === 'flood' ? null : await idleThenAbuse(service, token, '--attacker');
    const floodCase = only === 'token' ? null : await idleThenAbuse(service, token, '--flooder');
    const result = {
      bench: 'abuse',
      machine: { cpus: cpus().length, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
      phaseSeconds: seconds,
      rounds,
      ...(tokenCase
        ? {
            connections: CONNECTIONS,
            idle: tokenCase.idle,
            underAbuse: tokenCase.underAbuse,
            attacker: (() => {
              const total = Object.values(tokenCase.attacker).reduce((a, b) => a + b, 0);
              return {
                attempts: total,
                perSec: Math.round(total / (seconds + 2 * rounds)),
                byStatus: tokenCase.attacker,
                cpuPct: tokenCase.attackerCpuPct,
              };
            })(),
            ratio: tokenCase.ratio,
            floor: tokenCase.floor,
            ratioToFloor: tokenCase.ratioToFloor,
            withinFloor: tokenCase.withinFloor,
          }
        : {}),
      ...(floodCase
        ? {
            flood: {
              sockets: FLOOD_SOCKETS,
              from: FLOOD_FROM,
              idle: floodCase.idle,
              underFlood: floodCase.underAbuse,
              attacker: {
                ...floodCase.attacker,
                openedPerSec: Math.round((floodCase.attacker.opened ?? 0) / (seconds + 2 * rounds)),
                cpuPct: floodCase.attackerCpuPct,
              },
              ratio: floodCase.ratio,
              floor: floodCase.floor,
              ratioToFloor: floodCase.ratioToFloor,
              withinFloor: floodCase.withinFloor,
            },
          }
        : {}),
    };
    if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      if (tokenCase) say('token', tokenCase, `${CONNECTIONS} connections of bad secrets`);
      if (floodCase) say('flood', floodCase, `${FLOOD_SOCKETS} reconnecting half-sent requests from ${FLOOD_FROM}`);
      process.stdout.write(`load average ${result.machine.loadavg.join(' ')}\n`);
    }
  } finally {
    await service.stop();
  }
}

if (args[0] === '--attacker') await attack(args[1]!, args[2]!);
else if (args[0] === '--flooder') await flood(args[1]!);
else await main();
