/**
 * Never lose a punch, never double one: a child `edge-agent run` drains a large backlog to the
 * real attendance service and is killed with SIGKILL at random moments, 20 times, restarted each
 * time (with manual punches recorded meanwhile); then the service holds every punched event
 * exactly once, each check-out on its own check-in.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { Outbox, type PunchInput } from '../../src/store/outbox.js';
import { runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { outboxCounts } from '../helpers/agent.js';

const EMPLOYEES = 200;
const DAYS = 40; // one check-in and one check-out per employee and day: 16,000 punches to start
const KILLS = 20;

let service: InProcessService;
let admin: AttendanceClient;
let dir: string;
let common: string[];
/** The agent of the current life, killed in afterAll if a failure left it running. */
let agent: ChildProcess | null = null;

function day(d: number): string {
  const t = new Date(Date.UTC(2026, 0, 1) + d * 86_400_000);
  return t.toISOString().slice(0, 10);
}

/** Through the CLI (as a technician would). */
async function status(): Promise<{ pending: number; dead: number; delivered: number }> {
  const r = await runCli(['queue', 'status', '--json', ...common]);
  return JSON.parse(r.stdout) as never;
}

/** Tops the backlog up to `target` pending punches (new days), writing the agent's database as a second writer. */
async function topUp(target: number, expected: Map<string, string>, nextDay: { d: number }): Promise<void> {
  const db = await openAgentDatabase(join(dir, 'data'));
  try {
    const outbox = await Outbox.open(db, { sinks: ['api'] });
    let pending = (await outbox.status()).pending;
    while (pending < target) {
      const d = nextDay.d++;
      const punches: PunchInput[] = [];
      for (let i = 0; i < EMPLOYEES; i++) {
        const inTime = `${day(d)} 07:${String(i % 60).padStart(2, '0')}:00`;
        const outTime = `${day(d)} 16:${String(i % 60).padStart(2, '0')}:00`;
        punches.push({
          employeeCode: `K${i}`,
          direction: 'in',
          localTime: inTime,
          tzOffset: 60,
          source: 'finger',
          terminalId: 'gate-crash',
        });
        punches.push({
          employeeCode: `K${i}`,
          direction: 'out',
          localTime: outTime,
          inTime,
          tzOffset: 60,
          source: 'finger',
          terminalId: 'gate-crash',
        });
        expected.set(`K${i}|${inTime}`, outTime);
      }
      await outbox.recordMany(punches);
      pending += punches.length;
    }
  } finally {
    await db.close();
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
}

beforeAll(async () => {
  service = await startService({ limits: { maxEventsReturned: 100_000 } });
  admin = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret });
  for (let i = 0; i < EMPLOYEES; i++) await admin.addOrUpdateUser({ employeeCode: `K${i}`, firstName: 'Crash', lastName: `K${i}` });
  await admin.addOrUpdateUser({ employeeCode: 'MANUAL', firstName: 'Manual', lastName: 'Punch' });
  dir = mkdtempSync(join(tmpdir(), 'crash-'));
  const secretFile = join(dir, 'api-secret');
  writeFileSync(secretFile, service.apiSecret, { mode: 0o600 });
  common = [
    '--data',
    join(dir, 'data'),
    '--terminal',
    'gate-crash',
    '--api',
    service.url,
    '--client-id',
    service.clientId,
    '--api-key',
    service.apiKey,
    '--api-secret-file',
    secretFile,
  ];
}, 60_000);
afterAll(async () => {
  if (agent && agent.exitCode === null && agent.signalCode === null) {
    const gone = exited(agent);
    agent.kill('SIGKILL');
    await gone;
  }
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('crash safety', () => {
  it(`SIGKILL ${KILLS} times while draining: every event on the service exactly once`, async () => {
    const lines: string[] = [];
    const expected = new Map<string, string>(); // code|inTime → outTime
    for (let d = 0; d < DAYS; d++) {
      for (let i = 0; i < EMPLOYEES; i++) {
        const inTime = `${day(d)} 0${6 + (i % 3)}:${String(i % 60).padStart(2, '0')}:00`;
        const outTime = `${day(d)} 1${5 + (i % 3)}:${String(i % 60).padStart(2, '0')}:00`;
        lines.push(
          JSON.stringify({ code: `K${i}`, direction: 'in', at: inTime, tz: 60 }),
          JSON.stringify({ code: `K${i}`, direction: 'out', at: outTime, tz: 60 }),
        );
        expected.set(`K${i}|${inTime}`, outTime);
      }
    }
    const file = join(dir, 'backlog.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const imp = await runCli(['punch', '--import', file, ...common]);
    expect(imp.code, imp.stderr).toBe(0);
    expect((await status()).pending).toBe(DAYS * EMPLOYEES * 2);

    const deliveredAtKill: number[] = [];
    const pendingAtKill: number[] = [];
    const nextDay = { d: DAYS };
    for (let k = 0; k < KILLS; k++) {
      // However fast this machine drains, every life starts with a backlog to be killed in: a
      // life that records a manual punch lasts a whole CLI run, and such lives were seen to
      // drain 6,200 and 7,200 punches, so each life starts with as many as the first import.
      await topUp(DAYS * EMPLOYEES * 2, expected, nextDay);
      agent = spawnCli(['run', ...common]);
      try {
        await waitForLine(agent, /edge-agent running/, 30_000);
        // Every fourth life, a manual punch is recorded while the agent drains.
        if (k % 4 === 1) {
          const at = `2026-06-${String(1 + k).padStart(2, '0')} 09:00:00`;
          const r = await runCli(['punch', '--code', 'MANUAL', '--in', '--at', at, '--tz', '60', ...common]);
          expect(r.code, r.stderr).toBe(0);
          expected.set(`MANUAL|${at}`, '');
        } else {
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 250)));
        }
      } finally {
        agent.kill('SIGKILL');
      }
      expect((await exited(agent)).signal).toBe('SIGKILL');
      const counts = await outboxCounts(join(dir, 'data'));
      deliveredAtKill.push(counts.delivered);
      pendingAtKill.push(counts.pending);
    }
    if (process.env.CRASH_DEBUG) console.log(`delivered ${deliveredAtKill.join(',')}\npending ${pendingAtKill.join(',')}`);
    // Kills landed while there was work: deliveries progressed from life to life, and most
    // kills found punches still pending.
    expect(deliveredAtKill[KILLS - 1]).toBeGreaterThan(deliveredAtKill[0]!);
    expect(pendingAtKill.filter((n) => n > 0).length).toBeGreaterThanOrEqual(KILLS - 2);

    // A last life drains the rest and stops cleanly on SIGTERM.
    agent = spawnCli(['run', ...common]);
    await waitForLine(agent, /edge-agent running/, 30_000);
    // Polled straight from the database file (a CLI process per poll would compete with the
    // draining agent for the CPU); the counts are checked through the CLI below.
    const end = Date.now() + 60_000;
    for (;;) {
      const s = await outboxCounts(join(dir, 'data'));
      if (s.pending === 0) break;
      if (Date.now() > end) throw new Error(`still ${s.pending} pending`);
      await new Promise((r) => setTimeout(r, 300));
    }
    agent.kill('SIGTERM');
    expect((await exited(agent)).code).toBe(0);
    const manual = [...expected.keys()].filter((k) => k.startsWith('MANUAL')).length;
    expect(await status()).toMatchObject({ pending: 0, dead: 0, delivered: (expected.size - manual) * 2 + manual });

    const env = await admin.getEvents({ from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' });
    const seen = new Map<string, number>();
    for (const e of env.returnValue ?? []) {
      const v = e.returnValue!;
      const key = `${v.employeeCode}|${v.inTime}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      expect(v.outTime ?? '', key).toBe(expected.get(key));
    }
    const lost = [...expected.keys()].filter((k) => !seen.has(k));
    const doubled = [...seen].filter(([, n]) => n > 1);
    expect(lost).toEqual([]);
    expect(doubled).toEqual([]);
    expect(seen.size).toBe(expected.size);
  }, 240_000);
});
