// `edge-agent enroll` and `edge-agent identify` as a technician runs them: the real CLI against the
// real attendance service on loopback, in-process (simulated scanners opened by the command) and
// through a running agent's control socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { runCli } from '../helpers/cli.js';
import { adminClient, agentApiFlags, startService, type InProcessService } from '../helpers/service.js';
import { startAgent, stopChild, terminalDir, type TerminalDir } from '../helpers/agent.js';

let service: InProcessService;
let agent: ChildProcess | null = null;

beforeAll(async () => {
  service = await startService();
  const admin = adminClient(service);
  await admin.addOrUpdateUser({ employeeCode: 'E4001', firstName: 'Ada', lastName: 'Lovelace', status: '0' });
  await admin.addOrUpdateUser({ employeeCode: 'E4002', firstName: 'Grace', lastName: 'Hopper', status: '0' });
});

afterAll(async () => {
  if (agent) await stopChild(agent);
  await service.stop();
});

function apiFlags(dir: TerminalDir): string[] {
  return ['--data', dir.dataDir, ...agentApiFlags(service, dir.dataDir)];
}

describe('edge-agent enroll without a running agent', () => {
  it('refuses an employee the attendance service does not know, before any capture', async () => {
    const dir = terminalDir();
    const r = await runCli(['enroll', 'NOBODY-1', '--simulate', ...apiFlags(dir)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ENROLL_UNKNOWN_USER: the attendance service does not know employee NOBODY-1/);
    expect(r.stderr).toMatch(/add the person in the attendance service first/);
    expect(r.stdout).not.toMatch(/place the finger/);
  }, 60_000);

  it('says what is wrong with its flags', async () => {
    const dir = terminalDir();
    const bad = await runCli(['enroll', 'E4001', '--modality', 'nose', '--data', dir.dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/CLI_USAGE: --modality takes finger, iris or badge, got "nose"/);
    const none = await runCli(['enroll', '--data', dir.dataDir]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/CLI_USAGE: name one employee code/);
    const noSim = await runCli(['identify', '--present', '7', ...apiFlags(dir)]);
    expect(noSim.code).toBe(2);
    expect(noSim.stderr).toMatch(/CLI_USAGE: --present needs a simulated finger scanner in this process/);
  }, 60_000);
});

describe('edge-agent enroll and identify through the running agent', () => {
  it('goes through the control socket: unknown user refused by the service, no scanner named plainly', async () => {
    const dir = terminalDir();
    agent = await startAgent(['--terminal', 'gate-enroll', ...apiFlags(dir)]);

    const unknown = await runCli(['enroll', 'NOBODY-2', '--data', dir.dataDir]);
    expect(unknown.stdout).toMatch(/enrolling NOBODY-2 through the running agent/);
    expect(unknown.stdout).toMatch(/checking NOBODY-2 with the attendance service/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/ENROLL_UNKNOWN_USER: the attendance service does not know employee NOBODY-2/);

    const noScanner = await runCli(['enroll', 'E4001', '--data', dir.dataDir]);
    expect(noScanner.stdout).toMatch(/E4001 is Ada Lovelace/);
    expect(noScanner.code).toBe(1);
    expect(noScanner.stderr).toMatch(/AGENT_NO_SCANNER: no finger scanner on this terminal/);
    expect(noScanner.stderr).toMatch(/configure one with --scanner/);

    const identify = await runCli(['identify', '--modality', 'iris', '--data', dir.dataDir, '--json']);
    expect(identify.code).toBe(1);
    expect(identify.stdout).toBe('');
    expect(identify.stderr).toMatch(/AGENT_NO_SCANNER: no iris scanner on this terminal/);

    const present = await runCli(['enroll', 'E4001', '--present', '5', '--data', dir.dataDir]);
    expect(present.code).toBe(2);
    expect(present.stderr).toMatch(/CLI_USAGE: --present works with simulated scanners opened by this command/);

    expect(await stopChild(agent)).toBe(0);
    agent = null;
  }, 60_000);
});
describe('a full enrolment with simulated scanners', () => {
  it('enrols a person (three captures, module template, upload), identifies them, and refuses their finger for someone else', async () => {
    const dir = terminalDir();
    const flags = ['--simulate', ...apiFlags(dir)];
    const first = await runCli(['enroll', 'E4001', '--present', '1001', ...flags], { timeoutMs: 120_000 });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/E4001 is Ada Lovelace/);
    for (const n of [1, 2, 3]) expect(first.stdout).toMatch(new RegExp(`capture ${n}/3 taken \\(quality \\d+`));
    expect(first.stdout).toMatch(/press 1 of 5: place the finger\n[\s\S]*press 5 of 5 read by the module \(2\/2\)\n {2}lift your finger/);
    expect(first.stdout).toMatch(/upload item 1: SUCCESS \(enrolled\)/);
    expect(first.stdout).toMatch(/enrolled E4001 \(Ada Lovelace\): finger right-index, 4 template\(s\) stored/);

    const who = await runCli(['identify', '--present', '1001', '--json', ...flags], { timeoutMs: 60_000 });
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ employeeCode: 'E4001', name: 'Ada Lovelace', decision: 'accept', modality: 'finger' });

    const stranger = await runCli(['identify', '--present', '1777', ...flags], { timeoutMs: 60_000 });
    expect(stranger.code).toBe(1);
    expect(stranger.stdout).toMatch(/not identified/);

    const dup = await runCli(['enroll', 'E4002', '--present', '1001', ...flags], { timeoutMs: 120_000 });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/ENROLL_DUPLICATE: this finger is already enrolled to employee E4001/);
    expect(dup.stdout).toMatch(/E4002 is Grace Hopper/);
  }, 240_000);
});
