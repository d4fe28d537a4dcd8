/**
 * `identify` never punches (issue 27, item 3), with the real daemon (`edge-agent run`) and an R30x
 * simulated on a real pty: the finger goes on the scanner as `identify` starts, before any prompt.
 * Whether the daemon's capture loop was already reading it (the image travels seconds over the
 * serial line) or not, the read is the identification's: `identify` names the person, the outbox
 * holds no punch, and the guide's next step, `punch --code`, is recorded (no dedupe refusal).
 *
 * The module keeps one template (capacity 1), another person's (E6000 comes first by code), so for
 * E6001 the daemon's loop reads the image and matches on the host, as a terminal does for anyone
 * not on its module.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { outputOf, runCli, spawnCli } from '../helpers/cli.js';
import { adminClient, agentApiFlags, startService, type InProcessService } from '../helpers/service.js';
import { outboxCounts, startAgent, startSimulatedModule, stopChild, terminalDir, until, type SimulatedModule } from '../helpers/agent.js';
import { has } from '../helpers/system.js';

describe.skipIf(!has('socat'))('identify with a finger already on the running agent’s scanner (needs socat)', () => {
  let service: InProcessService;
  let sim: SimulatedModule;
  let agent: ChildProcess | null = null;

  beforeAll(async () => {
    [service, sim] = await Promise.all([startService(), startSimulatedModule(['--capacity', '1'])]);
    const admin = adminClient(service);
    await admin.addOrUpdateUser({ employeeCode: 'E6000', firstName: 'Alan', lastName: 'Turing', status: '0' });
    await admin.addOrUpdateUser({ employeeCode: 'E6001', firstName: 'Ada', lastName: 'Lovelace', status: '0' });
  }, 60_000);
  afterAll(async () => {
    if (agent) await stopChild(agent);
    await sim?.stop();
    await service?.stop();
  });

  it('identifies the finger, records no punch, and the manual punch after it is taken', async () => {
    const dir = terminalDir();
    const withSecret = ['--data', dir.dataDir, ...agentApiFlags(service, dir.dataDir)];
    // Enrolled before the agent runs, on an in-process simulated module with the same synthetic finger.
    for (const [code, finger] of [
      ['E6000', '1002'],
      ['E6001', '1001'],
    ]) {
      const enrolled = await runCli(['enroll', code!, '--scanner', 'r30x:sim', '--present', finger!, ...withSecret], {
        timeoutMs: 120_000,
      });
      expect(enrolled.code, enrolled.stdout + enrolled.stderr).toBe(0);
    }

    agent = await startAgent(['--terminal', 'gate-identify', '--scanner', `r30x:${sim.device}`, ...withSecret]);
    const running = agent;
    await until(async () => /"msg":"scanner ready"/.test(outputOf(running)), 30_000, 'the scanner ready');

    // The finger goes on as the command starts: no prompt has been shown yet.
    const child = spawnCli(['identify', ...withSecret]);
    await sim.send('finger 1001');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const out = outputOf(child);
    expect(code, out).toBe(0);
    expect(out).toMatch(/identified E6001 \(Ada Lovelace\): score \d+/);
    await sim.send('lift');

    // Nothing was punched: not by the capture loop, not after identify gave the scanner back.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await outboxCounts(dir.dataDir)).toEqual({ pending: 0, dead: 0, delivered: 0 });
    const list = await runCli(['queue', 'list', '--data', dir.dataDir]);
    expect(list.stdout).toBe('nothing pending\n');
    expect(outputOf(agent)).not.toMatch(/"msg":"capture: /);

    // The guide's next step: a manual punch for the same person is recorded, not refused as a repeat.
    const punch = await runCli(['punch', '--code', 'E6001', ...withSecret]);
    expect(punch.code, punch.stdout + punch.stderr).toBe(0);
    expect(punch.stdout + punch.stderr).not.toMatch(/duplicate|dedupe|already punched/i);
    const counts = await outboxCounts(dir.dataDir);
    expect(counts.pending + counts.delivered).toBe(1);

    expect(await stopChild(agent)).toBe(0);
    agent = null;
  }, 240_000);
});
