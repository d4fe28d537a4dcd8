/**
 * The technician's walk-through of docs/technician.md, run as written: every command of its block,
 * in order, from `install-service --dry-run` to the first delivered punch and `fleet --check`.
 *
 * What this test changes on the way, and only this (see `localize`):
 *  - paths: `/etc/edge-agent`, `/var/lib/edge-agent` and the install root (`--prefix`) are under a
 *    temporary folder; `/etc/edge-agent/config.yaml` is that folder's, through the rule's seam
 *    (EDGE_AGENT_TEST_INSTALLED_CONFIG), so the commands without --config find it as on a terminal;
 *  - the attendance service and the broker are on loopback (`/var/lib/attendance/service.db` is
 *    the service's database), the key and secret are the ones `keys create` printed;
 *  - the scanner `/dev/fingerprint0` is a simulated R30x on a real pty (`edge-agent simulate`)
 *    where socat exists; without socat it is the in-process simulator (`sim`), and `enroll` and
 *    `identify` get `--present 1001` (the person's finger) since no other process can press it;
 *  - `systemctl enable --now edge-agent` starts `edge-agent run` with the unit's Environment= lines.
 * On the pty the test plays the person: it presses and lifts as the command's lines ask.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { defaultExecStart } from '../../src/setup/service-files/daemon-command.js';
import { hiddenPaths, parseUnit } from '../../src/setup/service-files/systemd-unit.js';
import { CLI_ENTRY, CLI_NODE_ARGS, captureOutput, childEnv, outputOf, ROOT, spawnCli, waitForLine, writeStdin } from '../helpers/cli.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { startSimulatedModule, stopChild, type SimulatedModule } from '../helpers/agent.js';
import { has } from '../helpers/system.js';

const PTY = has('socat');
const FINGER = 1001;

/** The commands of the walk-through block: one per line, comments and blank lines left out. */
function walkthrough(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/technician.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## A terminal from the box to its first delivered punch'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe(`the technician's walk-through, as written in docs/technician.md (scanner on ${PTY ? 'a real pty' : 'the in-process simulator: no socat'})`, () => {
  let T: string;
  let service: InProcessService;
  let broker: TestBroker;
  let sim: SimulatedModule | null = null;
  let agent: ChildProcess | null = null;
  let apiKey = '';
  let apiSecret = '';

  const cli = [process.execPath, ...CLI_NODE_ARGS, CLI_ENTRY].map((p) => `'${p}'`).join(' ');
  const env = () =>
    childEnv({
      EDGE_AGENT_CONFIG: '',
      EDGE_AGENT_TEST_INSTALLED_CONFIG: `${T}/etc/edge-agent/config.yaml`,
      EDGE_AGENT_TEST_DEMO_CONFIG: '',
      EDGE_AGENT_LOG_LEVEL: 'warn',
    });

  beforeAll(async () => {
    T = mkdtempSync(join(tmpdir(), 'walkthrough-'));
    [service, broker] = await Promise.all([startService(), startBroker()]);
    if (PTY) sim = await startSimulatedModule();
  }, 60_000);
  afterAll(async () => {
    if (agent) await stopChild(agent);
    await sim?.stop();
    await broker?.stop();
    await service?.stop();
  });

  /** The doc's line as it runs here (see the file comment). */
  function localize(line: string): string {
    let cmd = line
      .replaceAll('/var/lib/attendance/service.db', service.dbPath)
      .replaceAll('/etc/edge-agent', `${T}/etc/edge-agent`)
      .replaceAll('/var/lib/edge-agent', `${T}/var/lib/edge-agent`)
      .replaceAll('https://attendance.example.com', service.url)
      .replaceAll('mqtt://broker.example.com:1883', broker.url)
      .replaceAll('THE-API-KEY', apiKey)
      .replaceAll('r30x:/dev/fingerprint0', PTY ? `r30x:${sim!.device}` : 'r30x:sim');
    if (/^edge-agent install-service\b/.test(cmd) && !cmd.includes('--dry-run')) cmd += ` --prefix '${T}'`;
    if (!PTY && /^edge-agent (enroll|identify)\b/.test(cmd)) cmd += ` --present ${FINGER}`;
    return cmd.replace(/^edge-agent /, `${cli} `);
  }

  /** The person at the pty's scanner: presses and lifts as the command's lines ask. */
  function person(child: ChildProcess): void {
    if (!sim) return;
    let chain = Promise.resolve();
    const send = (line: string, afterMs = 0) => {
      chain = chain.then(async () => {
        if (afterMs) await new Promise((r) => setTimeout(r, afterMs));
        await sim!.send(line);
      });
    };
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        // The prompts: "press 2 of 5: place the same finger again", "lift your finger" (identify: "place the finger").
        if (/^\s+(press \d+ of \d+( again)?: )?place the (same )?finger/.test(l)) send(`finger ${FINGER}`);
        else if (/lift your finger|still on the sensor: lift it|^(not )?identified/.test(l)) send('lift');
      }
    });
  }

  function sh(cmd: string, stdin = ''): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = captureOutput(spawn('sh', ['-c', cmd], { cwd: T, env: env(), stdio: ['pipe', 'pipe', 'pipe'] }));
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d));
      child.stderr!.on('data', (d: Buffer) => (stderr += d));
      person(child);
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${cmd} did not finish in 150 s\n${outputOf(child)}`));
      }, 150_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      writeStdin(child, stdin, { end: true });
    });
  }

  /** `systemctl enable --now edge-agent`: `edge-agent run` with the Environment= of the unit install-service wrote. */
  async function startUnit(): Promise<void> {
    const unitFile = join(T, 'etc/systemd/system/edge-agent.service');
    const envLines = existsSync(unitFile)
      ? (parseUnit(readFileSync(unitFile, 'utf8')).get('Service') ?? []).filter(([k]) => k === 'Environment').map(([, v]) => v)
      : ['EDGE_AGENT_CONFIG=/etc/edge-agent/config.yaml'];
    expect(envLines.some((l) => l.startsWith('EDGE_AGENT_DATA_DIR'))).toBe(false); // the config alone says where the data is
    const unitEnv: Record<string, string> = {};
    for (const l of envLines) {
      const [k, v] = l.split(/=(.*)/s) as [string, string];
      if (!v.includes('%')) unitEnv[k] = v.replaceAll('/etc/edge-agent', `${T}/etc/edge-agent`); // %d (credentials) is systemd's
    }
    expect(unitEnv.EDGE_AGENT_CONFIG).toBe(`${T}/etc/edge-agent/config.yaml`);
    agent = spawnCli(['run'], { cwd: T, env: { ...env(), ...unitEnv, EDGE_AGENT_LOG_LEVEL: 'info' } });
    await waitForLine(agent, /edge-agent running: terminal gate-1/, 60_000);
  }

  it('runs every command of the block in order, each doing what the guide says', async () => {
    const commands = walkthrough();
    expect(commands[0]).toMatch(/^edge-agent keys create/);
    expect(commands).toContain('edge-agent install-service --dry-run');
    expect(commands.at(-1)).toBe('edge-agent fleet --check');
    const hidden = hiddenPaths(defaultExecStart(CLI_ENTRY)).length > 0; // a checkout the unit could not see (CI's under /tmp)
    const done: string[] = [];

    for (const line of commands) {
      const what = `step ${done.length + 1}: ${line}`;
      if (line === 'systemctl enable --now edge-agent') {
        await startUnit();
        done.push(line);
        continue;
      }
      const stdin = line.startsWith('umask 077; cat >') ? `${apiSecret}\n` : '';
      let r = await sh(localize(line), stdin);
      const out = `${what}\nexit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

      if (line.startsWith('edge-agent keys create')) {
        expect(r.code, out).toBe(0);
        apiKey = /^apiKey: +(\S+)$/m.exec(r.stdout)![1]!;
        apiSecret = /^apiSecret: +(\S+)$/m.exec(r.stdout)![1]!;
      } else if (line.startsWith('edge-agent install-service')) {
        if (hidden && line.includes('--dry-run')) {
          // On this machine, a checkout the unit could not see is refused, as documented.
          expect(r.code, out).toBe(1);
          expect(r.stdout, out).toContain('refused: nothing written');
        } else if (hidden) {
          // Staged under the test's prefix, the hidden paths are the target's: said, not refused.
          expect(r.code, out).toBe(0);
          expect(r.stdout, out).toMatch(/^skipped +check ExecStart is visible to the service\n +staged under /m);
          expect(existsSync(join(T, 'etc/systemd/system/edge-agent.service')), out).toBe(true);
        } else {
          expect(r.code, out).toBe(0);
          if (line.includes('--dry-run'))
            expect(r.stdout, out).toMatch(/^would do +write systemd unit \/etc\/systemd\/system\/edge-agent\.service$/m);
          else expect(existsSync(join(T, 'etc/systemd/system/edge-agent.service')), out).toBe(true);
        }
      } else if (line.startsWith('edge-agent provision')) {
        expect(r.code, out).toBe(0);
        expect(r.stdout, out).toContain('provisioned gate-1 (configVersion 1)');
        expect(r.stdout, out).toMatch(/PASS +api-token: .* gave a token/);
        expect(r.stdout, out).toMatch(/PASS +mqtt: connected to .* \(monitoring only: punches are not delivered here\)/);
        expect(r.stdout, out).toMatch(/PASS +scanner r30x:/);
      } else if (line === 'edge-agent doctor') {
        expect(r.code, out).toBe(0);
        expect(r.stdout, out).toMatch(
          new RegExp(`^PASS +config +${T}/etc/edge-agent/config\\.yaml is valid .*data ${T}/var/lib/edge-agent\\)`, 'm'),
        );
        expect(r.stdout, out).toMatch(/^healthy/m);
      } else if (line.startsWith('edge-agent users add')) {
        expect(r.code, out).toBe(0);
        expect(r.stdout, out).toContain('added E1001  Ada Lovelace  active');
      } else if (line.startsWith('edge-agent enroll')) {
        expect(r.code, out).toBe(0);
        expect(r.stdout, out).toMatch(/^enrolled E1001 \(Ada Lovelace\): finger right-index, \d+ template\(s\) stored$/m);
        expect(r.stdout, out).toMatch(/upload: (\d+) of \1 item\(s\) accepted/);
      } else if (line.startsWith('edge-agent identify')) {
        expect(r.code, out).toBe(0);
        expect(r.stdout, out).toMatch(/^identified E1001 \(Ada Lovelace\): score \d+ \(finger, \d+ ms\)$/m);
      } else if (line.startsWith('edge-agent punch')) {
        expect(r.code, out).toBe(0);
        expect(r.stdout, out).toMatch(/^recorded check-in of E1001 at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
      } else if (line === 'edge-agent queue status') {
        // The running agent delivers it: the same command again until it says so.
        for (let i = 0; i < 40 && !/^delivered +1 /m.test(r.stdout); i++) {
          await new Promise((res) => setTimeout(res, 1000));
          r = await sh(localize(line));
        }
        expect(r.code, out).toBe(0);
        expect(r.stdout, `${out}\nagent:\n${agent ? outputOf(agent) : ''}`).toMatch(/^delivered +1 +\(last delivery /m);
        expect(r.stdout).toMatch(/^pending +0/m);
      } else if (line === 'edge-agent fleet --check') {
        expect(r.code, `${out}\nagent:\n${agent ? outputOf(agent) : ''}`).toBe(0);
        expect(r.stdout, out).toMatch(/plant-north +gate-1 +online +\S+ ago +1\/1 ready +0 /);
        expect(r.stdout, out).toMatch(/^OK: 1 terminal\(s\), none lost or degraded$/m);
      } else {
        expect(r.code, out).toBe(0); // the shell steps: the secret's file, and removing it
      }
      done.push(line);
    }
    expect(done).toEqual(commands);

    // The punch is the service's now, in the terminal's time zone.
    const client = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey, apiSecret });
    const events = await client.getEvents({ code: 'E1001', from: '2000-01-01 00:00:00', to: '2100-01-01 00:00:00' });
    expect(events.returnValue?.map((e) => e.returnValue?.employeeCode)).toEqual(['E1001']);
    expect(existsSync(join(T, 'etc/edge-agent/api-secret'))).toBe(false);
    expect(existsSync(join(T, 'var/lib/edge-agent/agent.db'))).toBe(true);
  }, 600_000);
});
