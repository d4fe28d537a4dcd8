// End to end: a simulated finger on a real pty becomes an event stored by the attendance service.
// Real processes (`edge-agent simulate r30x` on a socat pty, `edge-agent run`), real SQLite files,
// real HTTP on loopback. The person's module template is taken through the real R30x driver and
// put in the terminal's encrypted cache before the agent starts; the agent places it in a module
// slot at start and identifies by the module's own search (no image extraction involved).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { AttendanceClient } from '../../src/api/client.js';
import { startService, type InProcessService } from '../helpers/service.js';
import {
  daemonStatus,
  seedModuleTemplates,
  startAgent,
  startSimulatedModule,
  stopChild,
  terminalDir,
  until,
  type SimulatedModule,
} from '../helpers/agent.js';
import { has } from '../helpers/system.js';

let service: InProcessService;
let admin: AttendanceClient;
let sim: SimulatedModule | null = null;
let agent: ChildProcess | null = null;

beforeAll(async () => {
  service = await startService();
  admin = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret });
  for (const [code, first] of [
    ['E2001', 'Ada'],
    ['E2002', 'Alan'],
  ] as const)
    await admin.addOrUpdateUser({ employeeCode: code, firstName: first, lastName: 'Test', status: '0' });
});

afterAll(async () => {
  if (agent) await stopChild(agent);
  await sim?.stop();
  await service.stop();
});

const ALL_TIME = { from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' };

async function events(code?: string) {
  const env = await admin.getEvents({ ...(code ? { code } : {}), ...ALL_TIME });
  expect(env.statusCode).toBe('SUCCESS');
  return (env.returnValue ?? []).map((e) => e.returnValue!);
}

type Capture = { punched: number; unknown: number; duplicate: number };
async function scannerState(dataDir: string): Promise<{ status: string; capture: Capture }> {
  const s = await daemonStatus(dataDir);
  const scanners = s.info.scanners as Array<{ status: string }>;
  return { status: scanners[0]!.status, capture: s.metrics.capture as Capture };
}

describe.skipIf(!has('socat'))('edge-agent run end to end, the module on a real pty (needs socat)', () => {
  it('a finger on the pty module becomes exactly one event in the service; an unknown finger none; unplugged and plugged back it punches again', async () => {
    const dir = terminalDir();
    await seedModuleTemplates(dir, [
      { employeeCode: 'E2001', fingerId: 4242 },
      { employeeCode: 'E2002', fingerId: 4343 },
    ]);
    const secretFile = join(dir.dataDir, 'api-secret');
    writeFileSync(secretFile, service.apiSecret, { mode: 0o600 });
    sim = await startSimulatedModule();
    agent = await startAgent([
      '--data',
      dir.dataDir,
      '--terminal',
      'gate-e2e',
      '--site',
      'plant-e2e',
      '--mode',
      'in',
      '--scanner',
      `r30x:${sim.device}:57600`,
      '--api',
      service.url,
      '--client-id',
      service.clientId,
      '--api-key',
      service.apiKey,
      '--api-secret-file',
      secretFile,
    ]);
    const dataDir = dir.dataDir;
    await until(async () => (await scannerState(dataDir)).status === 'ready', 20_000, 'scanner ready');

    // A known finger: one punch, delivered once, however long the finger stays on.
    expect(await sim.send('finger 4242')).toBe('ok: finger 4242');
    await until(async () => (await scannerState(dataDir)).capture.punched === 1, 10_000, 'punch of E2001');
    await new Promise((r) => setTimeout(r, 800)); // the finger stays on: still one capture
    expect(await sim.send('lift')).toBe('ok: lift');
    const [ada] = await until(
      async () => {
        const e = await events('E2001');
        return e.length > 0 ? e : null;
      },
      15_000,
      'event of E2001 in the service',
    );
    expect(ada).toMatchObject({ employeeCode: 'E2001' });
    expect(ada!.inTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect((await scannerState(dataDir)).capture).toMatchObject({ punched: 1, duplicate: 0 });

    // An unknown finger: the module search misses, nobody is punched.
    await sim.send('finger 999');
    await until(
      async () => (await scannerState(dataDir)).capture.unknown === 1,
      25_000,
      'unknown finger noticed (the module misses, the image goes up for host matching)',
    );
    await sim.send('lift');

    // Unplugged and plugged back in: the agent reconnects by itself (no restart) and punches.
    expect(await sim.send('fault unplug on')).toBe('ok: fault unplug on');
    await until(async () => (await scannerState(dataDir)).status !== 'ready', 10_000, 'scanner seen unplugged');
    expect(await sim.send('fault unplug off')).toBe('ok: fault unplug off');
    await until(async () => (await scannerState(dataDir)).status === 'ready', 30_000, 'scanner ready again');
    await sim.send('finger 4343');
    await until(async () => (await scannerState(dataDir)).capture.punched === 2, 10_000, 'punch of E2002 after the replug');
    await sim.send('lift');
    await until(async () => (await events('E2002')).length === 1, 15_000, 'event of E2002 in the service');

    // Exactly one event each, nothing for the unknown finger.
    await new Promise((r) => setTimeout(r, 500));
    const all = await events();
    expect(all.map((e) => e.employeeCode).sort()).toEqual(['E2001', 'E2002']);
    expect((await scannerState(dataDir)).capture).toMatchObject({ punched: 2, unknown: 1, duplicate: 0 });

    expect(await stopChild(agent)).toBe(0);
    agent = null;
  }, 90_000);
});
