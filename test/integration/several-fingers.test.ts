// Several fingers per person and the second-finger step (issue 29 item 3), end to end with real
// parts: `edge-agent enroll --fingers 2` (the real CLI, a real SQLite template cache, the real
// attendance service on loopback), then `edge-agent identify` on the command's simulated scanner
// (both tiers) and `edge-agent run` on an R30x simulator on a real pty (`edge-agent simulate
// r30x` on socat, full tier), punches checked in the service.
//
// Two people are made close the way a wrong or twin enrolment makes them: the second person's
// right-index templates are copies of the first one's (put in the real cache). The module's own
// templates are left out, so the host decides by person (a module's search names one slot, it
// does not fuse by person).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { AttendanceClient } from '../../src/api/client.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache } from '../../src/store/template-cache.js';
import { runCli, waitForLine } from '../helpers/cli.js';
import { adminClient, agentApiFlags, startService, type InProcessService } from '../helpers/service.js';
import {
  daemonStatus,
  startAgent,
  startSimulatedModule,
  stopChild,
  terminalDir,
  until,
  type SimulatedModule,
  type TerminalDir,
} from '../helpers/agent.js';
import { has } from '../helpers/system.js';

let service: InProcessService;
let admin: AttendanceClient;
let sim: SimulatedModule | null = null;
let agent: ChildProcess | null = null;

beforeAll(async () => {
  service = await startService();
  admin = adminClient(service);
  await admin.addOrUpdateUser({ employeeCode: 'E5001', firstName: 'Ada', lastName: 'Two', status: '0' });
  await admin.addOrUpdateUser({ employeeCode: 'E5002', firstName: 'Bea', lastName: 'Close', status: '0' });
});

afterAll(async () => {
  if (agent) await stopChild(agent);
  await sim?.stop();
  await service.stop();
});

const ALL_TIME = { from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' };
async function events(code: string): Promise<number> {
  const env = await admin.getEvents({ code, ...ALL_TIME });
  expect(env.statusCode).toBe('SUCCESS');
  return (env.returnValue ?? []).length;
}

/** Copies `from`'s standard templates at `position` to `to`, and drops every module template (host matching decides). */
async function makeClose(dir: TerminalDir, from: string, position: string, to: string): Promise<number> {
  const db = await openAgentDatabase(dir.dataDir);
  try {
    const cache = await TemplateCache.open(db, { key: dir.templateKey });
    const copies = [];
    for await (const t of cache.listTemplates({ employeeCode: from })) {
      if (t.format === 'r30x-char') await cache.removeTemplate(t.id);
      else if (t.position === position)
        copies.push({ employeeCode: to, modality: t.modality, position, format: t.format, data: t.data, sensorModel: t.sensorModel });
    }
    await cache.upsertUser({ employeeCode: to });
    await cache.addTemplates(copies);
    return copies.length;
  } finally {
    await db.close();
  }
}

async function capture(dataDir: string): Promise<{ punched: number; unknown: number }> {
  return (await daemonStatus(dataDir)).metrics.capture as { punched: number; unknown: number };
}

/** The enrolled terminal: E5001 with two fingers (1001, 1002), E5002 close to her right-index; made once for both suites. */
let enrolment: Promise<{ dir: TerminalDir; config: string; api: string[] }> | null = null;
function enrolled(): Promise<{ dir: TerminalDir; config: string; api: string[] }> {
  enrolment ??= (async () => {
    const dir = terminalDir();
    const config = join(dir.dataDir, 'config.yaml');
    writeFileSync(config, 'policy:\n  dedupeWindowSec: 0\n  secondFinger: on\n  secondFingerTimeoutSec: 6\n');
    const api = agentApiFlags(service, dir.dataDir);
    const enrol = (...args: string[]) =>
      runCli(['enroll', ...args, '--simulate', '--config', config, '--data', dir.dataDir, ...api], { timeoutMs: 180_000 });

    // Two fingers, each a different one, stored as the person's templates at their positions.
    const enrolled = await enrol('E5001', '--fingers', '2', '--captures', '2', '--present', '1001,1002');
    expect(enrolled.stderr).toBe('');
    expect(enrolled.code).toBe(0);
    expect(enrolled.stdout).toMatch(/finger 2 of 2: right-middle \(another finger than right-index\)/);
    expect(enrolled.stdout).toMatch(/enrolled E5001 \(Ada Two\): finger right-index, right-middle, 6 template\(s\) stored/);
    expect(enrolled.stdout).toMatch(/ {2}right-index: 3 template\(s\) stored\n {2}right-middle: 3 template\(s\) stored/);
    expect(enrolled.stdout).toMatch(/upload item 4: SUCCESS/);

    // The same finger as the second one is refused, saying which finger it is.
    const same = await enrol('E5002', '--position', 'left-index,left-middle', '--captures', '1', '--present', '1003,1003');
    expect(same.code).toBe(1);
    expect(same.stdout).toMatch(
      /not taken \(this is the left-index finger again, already taken in this enrolment: place the left-middle finger\)/,
    );
    expect(same.stderr).toMatch(
      /ENROLL_SAME_FINGER: finger 2 of 2 \(left-middle\), press 1 of 3: the left-index finger was pressed 3 times/,
    );

    expect(await makeClose(dir, 'E5001', 'right-index', 'E5002')).toBe(2);
    return { dir, config, api };
  })();
  return enrolment;
}

describe('several fingers enrolled, and identify asking a second finger (simulated scanner in the command)', () => {
  it('enrols two different fingers (a repeated finger refused), finds the person by either, and decides two close people on two fingers', async () => {
    const { dir, config, api } = await enrolled();
    const flags = ['--simulate', '--config', config, '--data', dir.dataDir, ...api];
    // Either finger finds her: right-middle is hers only.
    const middle = await runCli(['identify', '--present', '1002', '--json', ...flags], { timeoutMs: 90_000 });
    expect(middle.code).toBe(0);
    expect(JSON.parse(middle.stdout)).toMatchObject({ employeeCode: 'E5001', decision: 'accept' });
    // Right-index is close to E5002's: identify asks for another finger and decides on both.
    const two = await runCli(['identify', '--present', '1001,1002', ...flags], { timeoutMs: 90_000 });
    expect(two.stdout).toMatch(/this finger is close to 2 enrolled people: lift it and place another finger within 6 s/);
    expect(two.stdout).toMatch(/told apart by the second finger/);
    expect(two.stdout).toMatch(/identified E5001 \(Ada Two\) on two fingers/);
    expect(two.code).toBe(0);
    // No second finger: nobody, with the reason.
    const one = await runCli(['identify', '--present', '1001', '--json', ...flags], { timeoutMs: 90_000 });
    expect(one.code).toBe(1);
    expect(JSON.parse(one.stdout)).toMatchObject({
      employeeCode: null,
      decision: 'reject',
      secondFinger: 'timeout',
      detail: 'no other finger within 6 s: not told apart from one finger, nothing punched',
    });
  }, 420_000);
});

describe.skipIf(!has('socat'))('several fingers per person and the second finger, on a real pty (needs socat)', () => {
  it('the agent punches the person by either finger, asks a second finger when two people are close, and punches nobody when none comes', async () => {
    const { dir, config, api } = await enrolled();

    sim = await startSimulatedModule(['--baud', '115200']);
    agent = await startAgent([
      '--config',
      config,
      '--data',
      dir.dataDir,
      '--terminal',
      'gate-two',
      '--mode',
      'in',
      '--scanner',
      `r30x:${sim.device}:115200`,
      ...api,
    ]);
    await until(
      async () => ((await daemonStatus(dir.dataDir)).info.scanners as Array<{ status: string }>)[0]?.status === 'ready',
      20_000,
      'scanner ready',
    );

    // Either finger finds the person: the second finger alone (only E5001 has it).
    await sim.send('finger 1002');
    await until(async () => (await events('E5001')) === 1, 60_000, 'E5001 punched by her right-middle finger');
    await sim.send('lift');

    // Her right-index is close to E5002's: another finger is asked for, and both decide among the two.
    const asked = waitForLine(
      agent,
      /^.*"msg":"this finger is close to 2 enrolled people: lift it and place another finger within 6 s".*$/,
      60_000,
    );
    await sim.send('finger 1001');
    const [askLine] = await asked;
    expect(askLine).toMatch(/"between":\["E500[12]","E500[12]"\]/);
    expect(await events('E5001')).toBe(1); // nothing punched on the first finger
    const told = waitForLine(agent, /"msg":"told apart by the second finger"/, 60_000);
    await sim.send('lift');
    await new Promise((r) => setTimeout(r, 500));
    await sim.send('finger 1002');
    await told;
    await until(async () => (await events('E5001')) === 2, 30_000, 'E5001 punched on two fingers');
    await sim.send('lift');
    expect(await events('E5002')).toBe(0);

    // Asked again and no second finger comes: a reject with its reason, nobody punched.
    const before = await capture(dir.dataDir);
    const askedAgain = waitForLine(agent, /"msg":"this finger is close to 2 enrolled people/, 60_000);
    const gaveUp = waitForLine(agent, /"msg":"no other finger within 6 s: not told apart from one finger, nothing punched"/, 60_000);
    await sim.send('finger 1001');
    await askedAgain;
    await sim.send('lift');
    await gaveUp;
    await until(async () => (await capture(dir.dataDir)).unknown === before.unknown + 1, 10_000, 'the reject counted');
    expect((await capture(dir.dataDir)).punched).toBe(before.punched);
    expect(await events('E5001')).toBe(2);
    expect(await events('E5002')).toBe(0);

    expect(await stopChild(agent)).toBe(0);
    agent = null;
  }, 420_000);
});
