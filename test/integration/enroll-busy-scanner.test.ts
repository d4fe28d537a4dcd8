/**
 * Enrolment while the agent holds the scanner (issue 19, item 4), on a simulated R30x on a real
 * pty: `edge-agent enroll` of another data folder (another configuration) cannot open the port
 * the running agent holds; it is refused at once with AGENT_SCANNER_BUSY naming the agent and
 * saying how to enrol (through that agent, or stop it), never a protocol error such as
 * "TemplateNum: no finger" or a scanner said not to exist. Run with the agent's own data folder,
 * the same command goes through the agent's control socket, prompted press by press.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { outputOf, runCli, spawnCli } from '../helpers/cli.js';
import { adminClient, agentApiFlags, startService, type InProcessService } from '../helpers/service.js';
import { startAgent, startSimulatedModule, stopChild, terminalDir, type SimulatedModule, type TerminalDir } from '../helpers/agent.js';
import { has } from '../helpers/system.js';

describe.skipIf(!has('socat'))('enrolment while the running agent holds the scanner (needs socat)', () => {
  let service: InProcessService;
  let sim: SimulatedModule;
  let agent: ChildProcess | null = null;

  beforeAll(async () => {
    [service, sim] = await Promise.all([startService(), startSimulatedModule()]);
    const admin = adminClient(service);
    await admin.addOrUpdateUser({ employeeCode: 'E5001', firstName: 'Ada', lastName: 'Lovelace', status: '0' });
  }, 60_000);
  afterAll(async () => {
    if (agent) await stopChild(agent);
    await sim?.stop();
    await service?.stop();
  });

  function apiFlags(dir: TerminalDir): string[] {
    return ['--data', dir.dataDir, ...agentApiFlags(service, dir.dataDir)];
  }

  it('refuses at once, naming the agent and how to enrol; through the agent the presses are prompted and nothing is lost', async () => {
    const agentDir = terminalDir();
    const scanner = `r30x:${sim.device}`;
    agent = await startAgent(['--terminal', 'gate-busy', '--scanner', scanner, ...apiFlags(agentDir)]);

    // Another data folder: no control socket to go through, and the port is the agent's.
    const other = terminalDir();
    const refused = await runCli(['enroll', 'E5001', '--scanner', scanner, ...apiFlags(other)], { timeoutMs: 60_000 });
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`AGENT_SCANNER_BUSY: scanner ${scanner} is held by pid ${agent.pid} (`);
    expect(refused.stderr).toMatch(/: an edge-agent runs with it\n/);
    expect(refused.stderr).toMatch(
      /hint: enroll through that agent: run edge-agent enroll with its configuration .*control socket; or stop it first \(systemctl stop edge-agent\)/,
    );
    expect(refused.stdout).not.toMatch(/place the finger/);
    expect(refused.stderr).not.toMatch(/TemplateNum|AGENT_NO_SCANNER|DRIVER_R30X/);

    // With the agent's data folder the command goes through the agent: the person follows the prompts.
    const child = spawnCli(['enroll', 'E5001', ...apiFlags(agentDir)]);
    const lines: string[] = [];
    let chain = Promise.resolve('');
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) {
        lines.push(l);
        if (/^\s+press \d+ of \d+( again)?: place the (same )?finger/.test(l)) chain = chain.then(() => sim.send('finger 1001'));
        else if (/^\s+lift your finger|still on the sensor: lift it/.test(l)) chain = chain.then(() => sim.send('lift'));
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, outputOf(child)).toBe(0);
    expect(lines[0]).toBe('enrolling E5001 through the running agent');
    const prompts = lines.filter((l) => /^\s+(press \d+ of \d+|lift your finger)/.test(l)).map((l) => l.trim());
    expect(prompts).toEqual([
      'press 1 of 5: place the finger',
      'lift your finger',
      'press 2 of 5: place the same finger again',
      'lift your finger',
      'press 3 of 5: place the same finger again',
      'lift your finger',
      "press 4 of 5: place the same finger again (the module's own enrolment, 1 of 2)",
      'press 4 of 5 read by the module (1/2)',
      'lift your finger',
      "press 5 of 5: place the same finger again (the module's own enrolment, 2 of 2)",
      'press 5 of 5 read by the module (2/2)',
      'lift your finger',
    ]);
    expect(lines).toContain('enrolled E5001 (Ada Lovelace): finger right-index, 4 template(s) stored');

    expect(await stopChild(agent)).toBe(0);
    agent = null;
  }, 240_000);
});
