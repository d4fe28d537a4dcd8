/**
 * The most common mistake at a terminal: the scanner configured at the wrong baud rate, or as the
 * wrong family. `doctor` and `provision` must say so and exit, with the port free for the next
 * try (they used to hang forever holding it, and the next try failed with "Cannot lock port").
 * Over a real pty with a simulated R30x at 57600 baud; without socat the same close-on-failure is
 * tested over the memory transport in test/unit/terminal/scanner-worker.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, CLI_NODE_ARGS, captureOutput, childEnv, ROOT, runCli } from '../helpers/cli.js';
import { startSimulatedModule, type SimulatedModule } from '../helpers/agent.js';
import { has } from '../helpers/system.js';

/** Runs the CLI; resolves with its output, its exit code and how long it lived after its last output. */
function timed(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; totalMs: number; afterLastOutputMs: number }> {
  return new Promise((resolve) => {
    const start = Date.now();
    let last = start;
    let stdout = '';
    let stderr = '';
    const child = captureOutput(
      spawn(process.execPath, [...CLI_NODE_ARGS, CLI_ENTRY, ...args], {
        cwd: ROOT,
        env: childEnv({ EDGE_AGENT_LOG_LEVEL: 'error' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d;
      last = Date.now();
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d;
      last = Date.now();
    });
    const kill = setTimeout(() => child.kill('SIGKILL'), 90_000); // a hang is a failure below, not a wait into the test's timeout
    child.on('close', (code) => {
      clearTimeout(kill);
      const end = Date.now();
      resolve({ code, stdout, stderr, totalMs: end - start, afterLastOutputMs: end - last });
    });
  });
}

describe.skipIf(!has('socat'))('doctor and provision against a module at the wrong baud rate or of the wrong family (needs socat)', () => {
  let sim: SimulatedModule;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulatedModule(); // an R30x at 57600 baud
    dir = mkdtempSync(join(tmpdir(), 'mismatch-'));
  }, 60_000);
  afterAll(async () => {
    await sim?.stop();
  });

  /** The port is free: the module answers a probe at its own family and baud at once. */
  async function portIsFree(): Promise<void> {
    const r = await runCli(['devices', '--port', sim.device, '--baud', '57600', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { devices: Array<{ family: string }> }).devices.map((d) => d.family)).toEqual(['r30x']);
  }

  for (const [what, scanner, hint] of [
    [
      'the wrong baud rate',
      { family: 'r30x', baud: 9600 },
      /nothing answered r30x at 9600 baud: a module at another baud rate or of another family stays silent; "edge-agent devices --port/,
    ],
    ['the wrong family', { family: 'gt521' }, /nothing answered gt521 at its default baud/],
  ] as const) {
    it(`doctor with ${what}: the scanner fails with a hint, the process exits, the port is free`, async () => {
      const config = join(dir, `${scanner.family}.yaml`);
      writeFileSync(
        config,
        `dataDir: ${join(dir, 'data')}\nscanners:\n  - {family: ${scanner.family}, path: ${sim.device}${'baud' in scanner ? `, baud: ${scanner.baud}` : ''}}\n`,
      );
      const r = await timed(['doctor', '--config', config]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(new RegExp(`^FAIL +scanner ${scanner.family}:\\S+ +DRIVER_TIMEOUT: `, 'm'));
      expect(r.stdout).toMatch(hint);
      expect(r.afterLastOutputMs).toBeLessThan(10_000);
      await portIsFree();
    }, 120_000);
  }

  it('provision with the wrong baud rate writes nothing, exits, and leaves the port free', async () => {
    const config = join(dir, 'provisioned.yaml');
    const r = await timed([
      'provision',
      '--non-interactive',
      '--config',
      config,
      '--secrets',
      join(dir, 's.yaml'),
      '--api',
      'none',
      '--upstream',
      'api',
      '--scanner',
      `r30x:${sim.device}:9600`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PROVISION_CHECK_FAILED: nothing written: .*scanner r30x:\S+: DRIVER_TIMEOUT/);
    expect(r.afterLastOutputMs).toBeLessThan(10_000);
    expect(r.totalMs).toBeLessThan(60_000);
    await portIsFree();
  }, 120_000);
});
