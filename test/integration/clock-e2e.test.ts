// Time you can trust without a real-time clock, end to end: the real daemon (`edge-agent run` as a
// child process) delivers to the real attendance service (in this process, HTTP on loopback)
// while the test moves the daemon's wall clock; the monotonic clock stays real. Punches go in
// through `edge-agent punch`, which the running daemon records with its own policy and time
// authority (the scanners' path), or, with no daemon, records itself through the same authority.
//
// The wall clock is moved two ways, the same scenarios each:
// - the clock seam (EDGE_AGENT_TEST_CLOCK_OFFSET_FILE: an offset the daemon reads), on any machine;
// - libfaketime (Debian's faketime package) preloaded into every agent process, with
//   FAKETIME_DONT_FAKE_MONOTONIC=1 and a FAKETIME_TIMESTAMP_FILE the test rewrites
//   (FAKETIME_NO_CACHE=1: read at every call), so the agent reads the faked clock through libc.
// A reboot is a new boot id (EDGE_AGENT_TEST_BOOT_ID_FILE).
//
// The truth: a punch taken from the clock happened when the monotonic clock said `monotonic_ms`
// (its row in the outbox); this process, whose wall clock is not moved, turns that into the true
// time. A punch with --at happened at the time typed.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { formatLocal, toUtcMs } from '../../src/api/date-time.js';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { daemonStatus, startAgent, terminalDir, until } from '../helpers/agent.js';
import { killTree, runCli } from '../helpers/cli.js';
import { has } from '../helpers/system.js';

const YEAR_2020 = Date.UTC(2020, 0, 1, 8, 0, 0);
const ALL_TIME = { from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' };

/** How the test moves the agent's wall clock: an offset from the true time, in ms. */
interface ClockDriver {
  env: Record<string, string>;
  set(offsetMs: number): void;
}

function seamClock(dir: string): ClockDriver {
  const file = join(dir, 'clock-offset');
  writeFileSync(file, '0');
  return { env: { EDGE_AGENT_TEST_CLOCK_OFFSET_FILE: file }, set: (ms) => writeFileSync(file, String(Math.round(ms))) };
}

/** libfaketime from Debian's package (the thread-safe build where there is one). */
function libfaketime(): string {
  const dirs = [
    '/usr/lib/x86_64-linux-gnu/faketime',
    '/usr/lib/aarch64-linux-gnu/faketime',
    '/usr/lib/arm-linux-gnueabihf/faketime',
    '/usr/lib64/faketime',
    '/usr/lib/faketime',
    '/usr/local/lib/faketime',
  ];
  for (const d of dirs) for (const f of ['libfaketimeMT.so.1', 'libfaketime.so.1']) if (existsSync(join(d, f))) return join(d, f);
  throw new Error(`faketime is installed but libfaketime.so.1 is in none of ${dirs.join(', ')}`);
}

function fakeTimeClock(dir: string): ClockDriver {
  const file = join(dir, 'faketimerc');
  // A relative offset in seconds ("+0", "-189345600"): the faked clock keeps running.
  const write = (ms: number) => writeFileSync(file, `${ms < 0 ? '-' : '+'}${Math.abs(Math.round(ms / 1000))}\n`);
  write(0);
  return {
    env: { LD_PRELOAD: libfaketime(), FAKETIME_DONT_FAKE_MONOTONIC: '1', FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1' },
    set: write,
  };
}

const monoNow = () => Number(process.hrtime.bigint() / 1_000_000n);

interface OutboxRow {
  id: string;
  employee_code: string;
  direction: 'in' | 'out';
  local_time: string;
  in_id: string | null;
  monotonic_ms: number;
  boot_id: string;
  clock_synced: number;
  clock_corrected: number;
  clock_released: number;
  time_source: string;
}

interface ServiceEvent {
  employeeCode: string;
  inTime?: string;
  outTime?: string;
}

/** One terminal: its data folder, its clock, its boot, its daemon, the service it delivers to. */
class Terminal {
  readonly dir = terminalDir();
  readonly clock: ClockDriver;
  readonly bootFile: string;
  readonly service: InProcessService;
  readonly admin: AttendanceClient;
  readonly secretFile: string;
  agent: ChildProcess | null = null;
  /** The true times this process saw for punches typed with --at, by id. */
  readonly typed = new Map<string, number>();

  constructor(service: InProcessService, makeClock: (dir: string) => ClockDriver) {
    this.service = service;
    this.admin = new AttendanceClient({
      baseUrl: service.url,
      clientId: service.clientId,
      apiKey: service.apiKey,
      apiSecret: service.apiSecret,
    });
    this.clock = makeClock(this.dir.dataDir);
    this.bootFile = join(this.dir.dataDir, 'boot-id');
    this.boot('boot-A');
    this.secretFile = join(this.dir.dataDir, 'api-secret');
    writeFileSync(this.secretFile, service.apiSecret, { mode: 0o600 });
  }

  boot(id: string): void {
    writeFileSync(this.bootFile, `${id}\n`);
  }

  get env(): Record<string, string> {
    // No time service is asked (this machine's would decide otherwise): the year and the times
    // already seen judge the clock. No dedupe, so one person can punch twice in a minute.
    return {
      ...this.clock.env,
      EDGE_AGENT_TEST_BOOT_ID_FILE: this.bootFile,
      EDGE_AGENT_CLOCK__SOURCES: '[]',
      EDGE_AGENT_POLICY__DEDUPE_WINDOW_SEC: '0',
    };
  }

  get args(): string[] {
    return [
      '--data',
      this.dir.dataDir,
      '--terminal',
      'gate-clock',
      '--site',
      'plant-clock',
      '--mode',
      'toggle',
      '--api',
      this.service.url,
      '--client-id',
      this.service.clientId,
      '--api-key',
      this.service.apiKey,
      '--api-secret-file',
      this.secretFile,
    ];
  }

  async start(): Promise<void> {
    this.agent = await startAgent(this.args, this.env);
  }

  async stop(how: 'SIGTERM' | 'power cut'): Promise<void> {
    const agent = this.agent!;
    this.agent = null;
    const exited = new Promise((r) => agent.once('exit', r));
    if (how === 'power cut') killTree(agent);
    else agent.kill('SIGTERM');
    await exited;
  }

  async cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return runCli([...args, ...this.args], { env: this.env, timeoutMs: 60_000 });
  }

  async json<T>(args: string[]): Promise<T> {
    const r = await this.cli([...args, '--json']);
    try {
      return JSON.parse(r.stdout) as T;
    } catch {
      throw new Error(`edge-agent ${args.join(' ')} --json printed no JSON (exit ${r.code}): ${r.stdout} ${r.stderr}`);
    }
  }

  /** `edge-agent punch --code C [...]`; returns what it printed. */
  async punch(
    code: string,
    extra: string[] = [],
  ): Promise<{
    recorded: true;
    id: string;
    direction: 'in' | 'out';
    localTime: string;
    clockTrusted: boolean;
    timeSource: string;
    inTime?: string;
  }> {
    const r = await this.json<{
      recorded: true;
      id: string;
      direction: 'in' | 'out';
      localTime: string;
      clockTrusted: boolean;
      timeSource: string;
      inTime?: string;
    }>(['punch', '--code', code, ...extra]);
    expect(r.recorded).toBe(true);
    return r;
  }

  /** A manual punch at a true time `trueMs` (UTC, the terminal's zone). */
  async punchAt(code: string, trueMs: number, direction: '--in' | '--out'): Promise<void> {
    const r = await this.punch(code, [direction, '--at', formatLocal(trueMs, 0)]);
    expect(r).toMatchObject({ timeSource: 'manual', clockTrusted: true });
    this.typed.set(r.id, Math.floor(trueMs / 1000) * 1000);
  }

  async rows(): Promise<OutboxRow[]> {
    const db = await SqliteDatabase.open(join(this.dir.dataDir, 'agent.db'), { readonly: true });
    try {
      return await db.all<OutboxRow>(
        'SELECT id, employee_code, direction, local_time, in_id, monotonic_ms, boot_id, clock_synced, clock_corrected, clock_released, time_source FROM outbox_events ORDER BY seq',
      );
    } finally {
      await db.close();
    }
  }

  async events(): Promise<ServiceEvent[]> {
    const env = await this.admin.getEvents(ALL_TIME);
    expect(env.statusCode).toBe('SUCCESS');
    return (env.returnValue ?? []).map((e) => e.returnValue as ServiceEvent);
  }

  async trusted(): Promise<boolean> {
    const s = await daemonStatus(this.dir.dataDir);
    return (s.metrics.clock as { clockTrusted: boolean }).clockTrusted;
  }

  /** Moves the wall clock and waits until the running daemon has judged it. */
  async setClock(offsetMs: number, trusted: boolean): Promise<void> {
    this.clock.set(offsetMs);
    await until(async () => (await this.trusted()) === trusted, 20_000, `the daemon sees the clock ${trusted ? 'trusted' : 'untrusted'}`);
  }
}

/** The true time of every punch: typed ones as typed; clock ones from their monotonic reading. */
function trueTimes(rows: OutboxRow[], typed: ReadonlyMap<string, number>): Map<string, number> {
  const wall = Date.now();
  const mono = monoNow();
  return new Map(rows.map((r) => [r.id, typed.get(r.id) ?? wall - (mono - r.monotonic_ms)]));
}

/** The events the service must end with: one per check-in, closed by the check-out that names it. */
function expectedEvents(
  rows: OutboxRow[],
  truth: ReadonlyMap<string, number>,
): Array<{ code: string; inAt: number; outAt: number | null }> {
  const outs = new Map(rows.filter((r) => r.direction === 'out' && r.in_id).map((r) => [r.in_id!, r]));
  return rows
    .filter((r) => r.direction === 'in')
    .map((r) => ({ code: r.employee_code, inAt: truth.get(r.id)!, outAt: outs.has(r.id) ? truth.get(outs.get(r.id)!.id)! : null }));
}

/** Exactly the punches taken, at their true times (within 1 s), each once. */
function expectExactly(events: ServiceEvent[], expected: ReturnType<typeof expectedEvents>): void {
  expect(events).toHaveLength(expected.length);
  const at = (local: string | undefined) => (local ? toUtcMs(local, 0) : null);
  for (const e of expected) {
    const matches = events.filter((s) => s.employeeCode === e.code && Math.abs(at(s.inTime)! - e.inAt) <= 1000);
    expect(
      matches,
      `${e.code} in at ${new Date(e.inAt).toISOString()}: ${JSON.stringify(events.filter((s) => s.employeeCode === e.code))}`,
    ).toHaveLength(1);
    const out = at(matches[0]!.outTime);
    if (e.outAt === null) expect(out, `${e.code} has no check-out`).toBeNull();
    else
      expect(
        Math.abs(out! - e.outAt),
        `${e.code} out at ${new Date(e.outAt).toISOString()}, service ${matches[0]!.outTime}`,
      ).toBeLessThanOrEqual(1000);
  }
}

const services: InProcessService[] = [];
const terminals: Terminal[] = [];
afterAll(async () => {
  for (const t of terminals) if (t.agent) killTree(t.agent);
  for (const s of services) await s.stop();
});

async function terminal(makeClock: (dir: string) => ClockDriver, people: string[]): Promise<Terminal> {
  const service = await startService();
  services.push(service);
  const t = new Terminal(service, makeClock);
  terminals.push(t);
  for (const code of people) await t.admin.addOrUpdateUser({ employeeCode: code, firstName: code, lastName: 'Clock', status: '0' });
  return t;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const to2020 = () => YEAR_2020 - Date.now();

function scenarios(makeClock: (dir: string) => ClockDriver): void {
  it('forward jump while running, restart on the same boot, reboot, a backward step, manual punches: the service ends with exactly the punches taken, at their true times, each once', async () => {
    const t = await terminal(makeClock, ['E1', 'E2', 'E3', 'E4', 'E5', 'E6', 'E7']);

    // 1. Booted with the clock at 2020 (no NTP yet): punches are marked and held.
    t.clock.set(to2020());
    await t.start();
    expect(await t.trusted()).toBe(false);
    expect(await t.punch('E1')).toMatchObject({ direction: 'in', clockTrusted: false, localTime: expect.stringMatching(/^2020-/) });
    expect(await t.punch('E2')).toMatchObject({ direction: 'in', clockTrusted: false });
    await pause(2500); // the uploader polls every second: more than enough to send them if it would
    expect(await t.events()).toEqual([]);
    // NTP answers: the clock jumps forward to the true time while the daemon runs.
    await t.setClock(0, true);
    await until(async () => (await t.events()).length === 2, 20_000, 'E1 and E2 delivered after the jump');

    // 2. The clock goes wrong again while E1 is in: E1 leaves (the daemon records it), the daemon is
    // stopped, E3 punches by hand with no daemon, then the daemon restarts on the same boot with a
    // right clock: it corrects before its uploader sends anything.
    await t.setClock(to2020(), false);
    expect(await t.punch('E1')).toMatchObject({ direction: 'out', clockTrusted: false });
    await t.stop('SIGTERM');
    expect(await t.punch('E3')).toMatchObject({ direction: 'in', clockTrusted: false, timeSource: 'clock' });
    t.clock.set(0);
    await t.start();
    await until(
      async () => (await t.events()).length === 3 && (await t.events()).some((e) => e.employeeCode === 'E1' && e.outTime),
      20_000,
      'E1 out and E3 delivered after the restart',
    );

    // 3. Power cut after the clock was set back (E4 punched meanwhile); the terminal boots again
    // (a new boot id) with a right clock: E4 is corrected from the last trusted time of its boot.
    await t.setClock(to2020(), false);
    expect(await t.punch('E4')).toMatchObject({ clockTrusted: false });
    await t.stop('power cut');
    t.boot('boot-B');
    t.clock.set(0);
    await t.start();
    await until(async () => (await t.events()).some((e) => e.employeeCode === 'E4'), 20_000, 'E4 delivered after the reboot');

    // 4. A step back of an hour while E5 is in: detected, E5's next punch closes the check-in
    // (which now looks an hour "in the future"), E6 is held; queue status and doctor say so.
    expect(await t.punch('E5')).toMatchObject({ direction: 'in', clockTrusted: true });
    await until(async () => (await t.events()).some((e) => e.employeeCode === 'E5'), 20_000, 'E5 in delivered');
    const stepsBefore = ((await daemonStatus(t.dir.dataDir)).metrics.clock as { clockSteps: number }).clockSteps;
    await t.setClock(-3_600_000, false);
    expect(await t.punch('E5')).toMatchObject({ direction: 'out', clockTrusted: false, inTime: expect.any(String) });
    expect(await t.punch('E6')).toMatchObject({ direction: 'in', clockTrusted: false });
    const metrics = (await daemonStatus(t.dir.dataDir)).metrics as {
      clock: { clockSteps: number; lastStep: { sizeSec: number } };
      queue: { held: { clock: number } };
    };
    expect(metrics.clock.clockSteps).toBe(stepsBefore + 1);
    expect(Math.abs(metrics.clock.lastStep.sizeSec + 3600)).toBeLessThan(3);
    expect(metrics.queue.held.clock).toBe(2);
    const status = await t.json<{
      pending: number;
      unsynced: number;
      clock: { trusted: boolean; source: string; lastStep: { sizeSec: number } };
      held: { clock: number; earlierBoot: number };
    }>(['queue', 'status']);
    expect(status).toMatchObject({ unsynced: 2, clock: { trusted: false, source: 'seen' }, held: { clock: 2, earlierBoot: 0 } });
    expect(Math.abs(status.clock.lastStep.sizeSec + 3600)).toBeLessThan(3);
    const text = (await t.cli(['queue', 'status'])).stdout;
    expect(text).toMatch(/^clock +NOT TRUSTED \(seen\)/m);
    expect(text).toMatch(/^last step +-(60 min|1 h) at /m);
    expect(text).toMatch(/^held +2 waiting for a trusted clock/m);
    const doctor = await t.json<{
      checks: Array<{ name: string; status: string; detail: string }>;
      clock: { trusted: boolean; held: { clock: number }; lastStep: { sizeSec: number } };
    }>(['doctor']);
    const clockCheck = doctor.checks.find((c) => c.name === 'clock')!;
    expect(clockCheck).toMatchObject({ status: 'warn', detail: expect.stringContaining('2 punch(es) held for the clock') });
    expect(doctor.clock).toMatchObject({ trusted: false, held: { clock: 2 } });
    expect(Math.abs(doctor.clock.lastStep.sizeSec + 3600)).toBeLessThan(3);
    expect((await t.cli(['doctor'])).stdout).toMatch(/^WARN +clock +NOT TRUSTED: .*last step -36\d\d(\.\d)? s/m);
    await pause(2000);
    expect((await t.events()).filter((e) => e.employeeCode === 'E6')).toEqual([]);
    expect((await t.events()).find((e) => e.employeeCode === 'E5')?.outTime ?? null).toBeNull();
    await t.setClock(0, true);
    await until(
      async () => (await t.events()).some((e) => e.employeeCode === 'E6'),
      20_000,
      'E5 out and E6 delivered after the clock came back',
    );

    // 5. Manual punches: a typed time is a person's statement (marked manual, not held, even
    // while the clock is wrong); a punch without --at is held like a scanner's.
    await t.setClock(to2020(), false);
    await t.punchAt('E7', Date.now() - 10 * 60_000, '--in');
    await until(
      async () => (await t.events()).some((e) => e.employeeCode === 'E7'),
      20_000,
      'E7 typed check-in delivered while the clock is wrong',
    );
    expect(await t.punch('E7')).toMatchObject({ direction: 'out', clockTrusted: false, timeSource: 'clock' });
    await t.setClock(0, true);
    await until(async () => (await t.events()).some((e) => e.employeeCode === 'E7' && e.outTime), 20_000, 'E7 out delivered');
    await until(
      async () => (await t.rows()).every((r) => r.clock_synced === 1 || r.clock_corrected === 1),
      10_000,
      'every punch trusted or corrected',
    );

    // The service holds exactly the punches taken, at their true times, each once: none at an
    // untrusted time, none twice.
    await pause(1500);
    const rows = await t.rows();
    expect(rows.map((r) => [r.employee_code, r.direction])).toEqual([
      ['E1', 'in'],
      ['E2', 'in'],
      ['E1', 'out'],
      ['E3', 'in'],
      ['E4', 'in'],
      ['E5', 'in'],
      ['E5', 'out'],
      ['E6', 'in'],
      ['E7', 'in'],
      ['E7', 'out'],
    ]);
    expect(rows.filter((r) => r.clock_corrected === 1).map((r) => r.employee_code)).toEqual([
      'E1',
      'E2',
      'E1',
      'E3',
      'E4',
      'E5',
      'E6',
      'E7',
    ]);
    expect(rows.find((r) => r.employee_code === 'E4')!.boot_id).toBe('boot-A');
    expectExactly(await t.events(), expectedEvents(rows, trueTimes(rows, t.typed)));
    await t.stop('SIGTERM');
  }, 300_000);

  it('a reboot after a boot that never had a trusted time: its punches are held with an alert (metrics, queue status, doctor) until queue release-unsynced sends them as they are, marked', async () => {
    const t = await terminal(makeClock, ['E8', 'E9']);
    t.boot('boot-C');
    t.clock.set(to2020());
    await t.start();
    const e8 = await t.punch('E8');
    expect(e8).toMatchObject({ clockTrusted: false });
    await t.stop('power cut');
    t.boot('boot-D');
    t.clock.set(0);
    await t.start();
    // Another person's punch goes at once; E8 waits for a decision.
    expect(await t.punch('E9')).toMatchObject({ clockTrusted: true });
    await until(async () => (await t.events()).some((e) => e.employeeCode === 'E9'), 20_000, 'E9 delivered');
    await pause(2000);
    expect((await t.events()).map((e) => e.employeeCode)).toEqual(['E9']);
    const metrics = (await daemonStatus(t.dir.dataDir)).metrics as {
      alerts: Array<{ code: string }>;
      queue: { held: { earlierBoot: number } };
    };
    expect(metrics.alerts.map((a) => a.code)).toEqual(['CLOCK_EARLIER_BOOT_HELD']);
    expect(metrics.queue.held.earlierBoot).toBe(1);
    expect(await t.json(['queue', 'status'])).toMatchObject({
      held: { earlierBoot: 1 },
      alerts: [{ code: 'CLOCK_EARLIER_BOOT_HELD' }],
      clock: { trusted: true },
    });
    expect((await t.cli(['queue', 'status'])).stdout).toMatch(/^ALERT +CLOCK_EARLIER_BOOT_HELD: 1 punch\(es\) of an earlier boot/m);
    const doctor = await t.json<{
      checks: Array<{ name: string; status: string; hint: string | null }>;
      clock: { alerts: Array<{ code: string }> };
    }>(['doctor']);
    expect(doctor.checks.find((c) => c.name === 'clock')).toMatchObject({
      status: 'warn',
      hint: expect.stringContaining('queue release-unsynced'),
    });
    expect(doctor.clock.alerts.map((a) => a.code)).toEqual(['CLOCK_EARLIER_BOOT_HELD']);

    // The decision: sent as it is (its time was never known), once, and marked in the outbox.
    expect(await t.json(['queue', 'release-unsynced'])).toEqual({ released: 1, corrected: 0 });
    await until(async () => (await t.events()).some((e) => e.employeeCode === 'E8'), 20_000, 'E8 delivered after the decision');
    await pause(1500);
    const e8Events = (await t.events()).filter((e) => e.employeeCode === 'E8');
    expect(e8Events).toEqual([expect.objectContaining({ inTime: e8.localTime })]);
    expect((await t.rows()).find((r) => r.id === e8.id)).toMatchObject({
      clock_synced: 0,
      clock_corrected: 0,
      clock_released: 1,
      boot_id: 'boot-C',
    });
    await t.stop('SIGTERM');
  }, 180_000);
}

describe('time without a real-time clock, the wall clock moved through the clock seam', () => {
  scenarios(seamClock);
});

describe.skipIf(!has('faketime'))('time without a real-time clock, the wall clock moved by libfaketime (needs faketime)', () => {
  scenarios(fakeTimeClock);
});
