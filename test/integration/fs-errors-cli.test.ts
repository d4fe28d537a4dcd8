/**
 * Every file-system error has a code and a hint (issue 27, item 4), with the real CLI run as a
 * user who cannot read the data folder (`nobody` through setpriv, the folder root's and 0700):
 * `queue status` and `punch` say CORE_FS_ACCESS and whom to run as, never a bare `EACCES: ...`;
 * `doctor` says its database and outbox checks were not checked (not "no database yet"), and does
 * not advise `provision` to generate a template key, which would orphan the stored templates.
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_ENTRY, CLI_NODE_ARGS, runCli } from '../helpers/cli.js';
import { has } from '../helpers/system.js';

const root = typeof process.getuid === 'function' && process.getuid() === 0;

describe.skipIf(!root || !has('setpriv'))('a user who cannot read the data folder (needs root and setpriv)', () => {
  it('gets the code and a hint naming the owner; doctor says "not checked" and advises nothing that orphans templates', async () => {
    // Under /tmp itself: the test's own temp folder is root's 0700, which nobody could not even pass through.
    const parent = mkdtempSync('/tmp/fs-errors-cli-');
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'data');
    const made = await runCli(['punch', '--code', 'E8001', '--data', dataDir]);
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(join(dataDir, 'agent.db'))).toBe(true);
    chmodSync(dataDir, 0o700);
    const config = join(parent, 'config.yaml');
    writeFileSync(config, '{}\n', { mode: 0o644 });
    // The same CLI as nobody: node and the checkout are readable by all, the data folder is not.
    const { spawn } = await import('node:child_process');
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          'setpriv',
          ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, ...CLI_NODE_ARGS, CLI_ENTRY, ...args],
          {
            cwd: process.cwd(),
            env: { PATH: process.env.PATH, HOME: parent, EDGE_AGENT_LOG_LEVEL: 'warn', EDGE_AGENT_CONFIG: config },
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    try {
      for (const args of [
        ['queue', 'status', '--data', dataDir],
        ['punch', '--code', 'E8002', '--data', dataDir],
      ]) {
        const r = await run(args);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(/CORE_FS_ACCESS: permission denied: user nobody cannot \w+ \S+/);
        expect(r.stderr).toMatch(/hint: run the command as root \(sudo edge-agent \.\.\.\): root owns /);
        expect(r.stderr).not.toMatch(/^edge-agent [a-z ]+: EACCES/m);
      }
      const doctor = await run(['doctor', '--data', dataDir, '--json']);
      const report = JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string; hint: string | null }> };
      const check = (name: string) => report.checks.find((c) => c.name === name);
      for (const name of ['database', 'outbox']) {
        expect(check(name)?.detail, name).toMatch(/^not checked: CORE_FS_ACCESS: permission denied: user nobody/);
        expect(check(name)?.detail).not.toMatch(/no database yet|no punches recorded/);
      }
      expect(doctor.stdout).not.toMatch(/no database yet|no punches recorded/);
      expect(check('template-key')?.hint ?? '').not.toMatch(/provision/);
    } finally {
      chmodSync(dataDir, 0o700);
      rmSync(parent, { recursive: true, force: true });
    }
  }, 120_000);
});
