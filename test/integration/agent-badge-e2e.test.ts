// Issue 14's Must show: a badge read on a simulated serial reader becomes exactly one punch in the
// real attendance service (src/server on loopback, its own SQLite file). The badge is bound to
// the employee through enrolment first (a keyed hash in the encrypted template cache, never the
// number); a second read inside the dedupe window adds nothing; an unknown badge is refused with
// feedback (the capture outcome "unknown", and the terminal's lights) and no punch.
//
// Two tiers, the same story:
// - over a real pty (needs socat): `edge-agent simulate badge --link` and `edge-agent run
//   --scanner badge-serial:PTY` as child processes, the badge enrolled with `edge-agent enroll
//   --modality badge` through the running agent's control socket;
// - everywhere: the daemon `edge-agent run` runs (daemonComponents: the same components, policy,
//   outbox and uploader) in this process, the reader's simulator on the in-process transport
//   (`--scanner badge-serial:sim`), the badge enrolled through the same enroller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { AttendanceClient } from '../../src/api/client.js';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { parseConfig } from '../../src/config/config.js';
import { loadSecrets } from '../../src/config/secrets.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { daemonComponents } from '../../src/daemon/wiring.js';
import { createAttendanceClient } from '../../src/daemon/upstreams.js';
import { enroll } from '../../src/terminal/enroller.js';
import type { CaptureOutcome } from '../../src/terminal/scanner-worker.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { outputOf, spawnCli, waitForLine } from '../helpers/cli.js';
import { daemonStatus, startAgent, startSimulatedModule, stopChild, terminalDir, until, type SimulatedModule } from '../helpers/agent.js';
import { has } from '../helpers/system.js';
import type { R30xSimulator } from '../../drivers/r30x/simulator.js';
import { LedColor } from '../../drivers/r30x/protocol.js';

/** EM4100 card 0008844356 (the number printed on it); another card nobody holds. */
const ADA_CARD = 8844356;
const STRANGER_CARD = 1234567;

let service: InProcessService;
let admin: AttendanceClient;

beforeAll(async () => {
  service = await startService();
  admin = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret });
  for (const code of ['E3001', 'E3002']) await admin.addOrUpdateUser({ employeeCode: code, firstName: 'Ada', lastName: code, status: '0' });
});

afterAll(async () => {
  await service.stop();
});

const ALL_TIME = { from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' };

async function events(code: string) {
  const env = await admin.getEvents({ code, ...ALL_TIME });
  expect(env.statusCode).toBe('SUCCESS');
  return (env.returnValue ?? []).map((e) => e.returnValue!);
}

/** The punches in the agent's outbox (a second reader of its database file). */
async function outboxRows(dataDir: string): Promise<Array<{ employee_code: string; source: string; state: string }>> {
  const db = await SqliteDatabase.open(join(dataDir, 'agent.db'), { readonly: true });
  try {
    return await db.all('SELECT employee_code, source, state FROM outbox_events ORDER BY seq');
  } finally {
    await db.close();
  }
}

describe.skipIf(!has('socat'))('a badge on a serial reader on a real pty becomes one punch (needs socat)', () => {
  let sim: SimulatedModule | null = null;
  let agent: ChildProcess | null = null;
  afterAll(async () => {
    if (agent) await stopChild(agent);
    await sim?.stop();
  });

  it('enrols the badge through the running agent, punches it once, adds nothing for a second read, refuses an unknown badge', async () => {
    const dir = terminalDir();
    const secretFile = join(dir.dataDir, 'api-secret');
    writeFileSync(secretFile, service.apiSecret, { mode: 0o600 });
    const api = ['--api', service.url, '--client-id', service.clientId, '--api-key', service.apiKey, '--api-secret-file', secretFile];
    sim = await startSimulatedModule(['--format', 'em4100-hex'], 'badge');
    agent = await startAgent([
      '--data',
      dir.dataDir,
      '--terminal',
      'door-e2e',
      '--site',
      'plant-e2e',
      '--mode',
      'in',
      '--scanner',
      `badge-serial:${sim.device}:9600:em4100-hex`,
      ...api,
    ]);
    const dataDir = dir.dataDir;
    const state = async () => {
      const s = await daemonStatus(dataDir);
      return { status: (s.info.scanners as Array<{ status: string }>)[0]!.status, capture: s.metrics.capture as Record<string, number> };
    };
    await until(async () => (await state()).status === 'ready', 20_000, 'badge reader ready');

    // Enrollment: the technician runs enroll; the person holds the card when asked.
    const enrolling = spawnCli(['enroll', 'E3001', '--modality', 'badge', '--data', dataDir, ...api]);
    const exited = new Promise((r) => enrolling.once('exit', r));
    await waitForLine(enrolling, /hold the badge to the reader/, 20_000, 'stdout');
    expect(await sim.send(`card ${ADA_CARD}`)).toBe(`ok: card ${ADA_CARD}`);
    expect(await exited).toBe(0);
    const said = outputOf(enrolling);
    expect(said).toMatch(/enrolling E3001 through the running agent/);
    expect(said).toMatch(/^enrolled E3001 \(Ada E3001\): badge badge, 1 template\(s\) stored$/m);
    expect(said).toMatch(/not uploaded: a badge stays with the terminals of the site/);
    expect(said).not.toContain(String(ADA_CARD));
    await sim.send('lift');
    await new Promise((r) => setTimeout(r, 1700)); // the same card again so soon is the same presentation
    // The card was read for the enrolment, not punched.
    expect((await state()).capture).toMatchObject({ punched: 0, unknown: 0 });
    expect(await events('E3001')).toEqual([]);

    // The badge punches: exactly one event in the service, marked badge in the outbox.
    await sim.send(`card ${ADA_CARD}`);
    await until(async () => (await state()).capture.punched === 1, 10_000, 'badge punch');
    await new Promise((r) => setTimeout(r, 500)); // held in the field: the reader repeats its frame
    await sim.send('lift');
    const [ada] = await until(
      async () => {
        const e = await events('E3001');
        return e.length > 0 ? e : null;
      },
      15_000,
      'the event of E3001 in the service',
    );
    expect(ada).toMatchObject({ employeeCode: 'E3001' });
    expect(ada!.inTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    // Presented again inside the dedupe window (60 s): read, recognised, nothing added.
    await new Promise((r) => setTimeout(r, 1700)); // past the reader's hold-off: a new presentation
    await sim.send(`card ${ADA_CARD}`);
    await until(async () => (await state()).capture.duplicate === 1, 10_000, 'the second read seen as a duplicate');
    await sim.send('lift');

    // An unknown badge: refused (outcome unknown), nobody punched.
    await sim.send(`card ${STRANGER_CARD}`);
    await until(async () => (await state()).capture.unknown === 1, 10_000, 'the unknown badge refused');
    await sim.send('lift');

    await new Promise((r) => setTimeout(r, 500));
    expect(await events('E3001')).toHaveLength(1);
    expect(await events('E3002')).toEqual([]);
    expect((await state()).capture).toMatchObject({ punched: 1, duplicate: 1, unknown: 1 });
    expect(await outboxRows(dataDir)).toEqual([{ employee_code: 'E3001', source: 'badge', state: 'delivered' }]);
    // The logs (info, JSON lines) name the person, never a card.
    const logs = outputOf(agent);
    expect(logs).toMatch(/"msg":"capture: punched"/);
    expect(logs).toMatch(/"result":"unknown".*"detail":"badge not enrolled","msg":"capture: unknown"/);
    for (const card of [ADA_CARD, STRANGER_CARD]) expect(logs).not.toContain(String(card));
    expect(await stopChild(agent)).toBe(0);
    agent = null;
  }, 120_000);
});

describe('a badge on the in-process serial reader becomes one punch (the daemon of edge-agent run, in this process)', () => {
  it('enrols the badge, punches it once, adds nothing for a second read, refuses an unknown badge with feedback', async () => {
    const dir = terminalDir();
    const config = parseConfig({
      dataDir: dir.dataDir,
      terminal: { id: 'door-inproc', site: 'plant-e2e', mode: 'in' },
      api: { url: service.url, clientId: service.clientId },
      upstream: ['api'],
      // The badge reader, and a fingerprint module beside it whose ring light shows the badge's outcome (the reader has none).
      scanners: [
        { family: 'badge-serial', path: 'sim', format: 'wiegand34' },
        { family: 'r30x', path: 'sim' },
      ],
      ops: { enabled: false },
      outbox: { backoffBaseMs: 100, backoffCapMs: 500 },
    });
    const secrets = loadSecrets({ file: dir.secretsFile, apiKey: service.apiKey, credentialsDir: null });
    secrets.apiSecret = service.apiSecret;
    const { components, runtime } = daemonComponents(config, secrets);
    const daemon = new Daemon({ config, secrets, idlePollMs: 100 });
    for (const c of components) daemon.use(c);
    await daemon.start();
    try {
      const worker = runtime.workers.get('sim:badge-serial')!;
      await until(
        async () => worker.status === 'ready' && runtime.workers.get('sim:r30x')!.status === 'ready',
        20_000,
        'badge reader and module ready',
      );
      const ring = () => (runtime.simulators.get('sim:r30x') as R30xSimulator).led?.color;
      const reader = runtime.simulators.get('sim:badge-serial')!;
      const outcomes: CaptureOutcome[] = [];
      worker.on('capture', (o) => outcomes.push(o));

      const progress: Array<Record<string, unknown>> = [];
      const result = await enroll(
        runtime,
        createAttendanceClient(config, secrets),
        { employeeCode: 'E3002', modality: 'badge', position: 'badge' },
        (e) => {
          progress.push(e);
          if (e.step === 'capture') reader.present(ADA_CARD);
        },
      );
      reader.lift();
      expect(result).toMatchObject({
        employeeCode: 'E3002',
        modality: 'badge',
        name: 'Ada E3002',
        templates: [{ format: 'badge-hmac-sha256', quality: null }],
        upload: null,
      });
      expect(progress.map((e) => e.step)).toEqual(expect.arrayContaining(['user', 'capture', 'badge-read', 'stored', 'no-upload']));
      expect(await runtime.cache!.countsByModality()).toMatchObject({ badge: 1 });
      await new Promise((r) => setTimeout(r, 1600)); // the same card again so soon is the same presentation

      reader.present(ADA_CARD);
      reader.lift();
      await until(async () => outcomes.length === 1, 10_000, 'the badge punch');
      expect(outcomes[0]).toMatchObject({ result: 'punched', employeeCode: 'E3002', direction: 'in' });
      await until(async () => ring() === LedColor.green, 5000, 'the module ring green for the badge punch');
      const [ev] = await until(
        async () => {
          const e = await events('E3002');
          return e.length > 0 ? e : null;
        },
        15_000,
        'the event of E3002 in the service',
      );
      expect(ev).toMatchObject({ employeeCode: 'E3002' });

      await new Promise((r) => setTimeout(r, 1600)); // past the reader's hold-off
      reader.present(ADA_CARD);
      reader.lift();
      await until(async () => outcomes.length === 2, 10_000, 'the second read');
      expect(outcomes[1]).toMatchObject({ result: 'duplicate', employeeCode: 'E3002' });

      reader.present(STRANGER_CARD);
      reader.lift();
      await until(async () => outcomes.length === 3, 10_000, 'the unknown badge');
      expect(outcomes[2]).toMatchObject({ result: 'unknown', employeeCode: null, detail: 'badge not enrolled' });
      await until(async () => ring() === LedColor.red, 5000, 'the module ring red for the unknown badge');

      await new Promise((r) => setTimeout(r, 500));
      expect(await events('E3002')).toHaveLength(1);
      expect((await runtime.metrics()).capture).toMatchObject({ punched: 1, duplicate: 1, unknown: 1 });
      const rows = await daemon.context!.outbox.list({ delivered: true });
      expect(rows.map((r) => [r.employeeCode, r.source])).toEqual([['E3002', 'badge']]);
    } finally {
      await daemon.stop();
    }
  }, 90_000);
});
