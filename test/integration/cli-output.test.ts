/**
 * Output for people (issue 27, item 6), with the real CLI: a pipe closed by its reader ends the
 * command quietly; `--log-level` means what EDGE_AGENT_LOG_LEVEL means (a flag over the
 * variable); the control socket goes where `controlSocket` / EDGE_AGENT_CONTROL_SOCKET says, so a
 * data folder on a file system without sockets does not stop `run`.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callDaemon } from '../../src/daemon/control-socket.js';
import { outputOf, runCli, spawnCli } from '../helpers/cli.js';
import { startAgent, stopChild, terminalDir } from '../helpers/agent.js';

describe('the command line for people', () => {
  it('ends quietly when the reader of its output has gone (queue list --help | true)', async () => {
    const child = spawnCli(['queue', 'list', '--help']);
    child.stdout!.destroy(); // the reader closed before the help was written
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(outputOf(child)).not.toMatch(/EPIPE|Unhandled|at .*\.js:\d+/);
    expect(code).toBe(0);
  }, 60_000);

  it('takes --log-level as EDGE_AGENT_LOG_LEVEL, over the variable', async () => {
    const dir = terminalDir();
    const env = { EDGE_AGENT_LOG_LEVEL: 'info' };
    const loud = await runCli(['punch', '--code', 'E7001', '--data', dir.dataDir], { env });
    expect(loud.code, loud.stderr).toBe(0);
    expect(loud.stderr).toMatch(/clock trusted/); // the variable alone: info lines
    const quiet = await runCli(['punch', '--code', 'E7002', '--data', dir.dataDir, '--log-level', 'silent'], { env });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toMatch(/E7002/);
    const bad = await runCli(['punch', '--code', 'E7003', '--data', dir.dataDir, '--log-level', 'loud']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/CLI_USAGE: --log-level takes fatal, error, warn, info, debug, trace, silent, got "loud"/);
  }, 90_000);

  it('puts the control socket where EDGE_AGENT_CONTROL_SOCKET says, and the commands find it there', async () => {
    const dir = terminalDir();
    const socket = join(mkdtempSync(join(tmpdir(), 'agent-ctl-')), 'agent.sock');
    const env = { EDGE_AGENT_CONTROL_SOCKET: socket };
    const secret = join(dir.dataDir, 'api-secret');
    writeFileSync(secret, 'not-used', { mode: 0o600 });
    const api = ['--api', 'http://127.0.0.1:9', '--api-key', 'k', '--api-secret-file', secret];
    const agent = await startAgent(['--terminal', 'gate-socket', '--data', dir.dataDir, ...api], env);
    try {
      expect(existsSync(socket)).toBe(true);
      expect(existsSync(join(dir.dataDir, 'control.sock'))).toBe(false);
      expect(await callDaemon(socket, 'ping', {})).toEqual({ pong: true, terminal: 'gate-socket' });
      // identify finds the running agent through the same setting (it holds the scanners: none here).
      const identify = await runCli(['identify', '--data', dir.dataDir], { env });
      expect(identify.code).toBe(1);
      expect(identify.stderr).toMatch(/AGENT_NO_SCANNER: no finger scanner on this terminal/);
    } finally {
      expect(await stopChild(agent)).toBe(0);
    }
    expect(existsSync(socket)).toBe(false);
  }, 90_000);
});
