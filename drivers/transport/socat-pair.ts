/**
 * A pseudo-terminal pair made by socat, for serving a simulator on a real tty: the host end is a
 * symlink at `hostLink` (what a driver opens, like /dev/ttyUSB0), the device end a symlink the
 * simulator opens. Killing socat is pulling the cable: both links vanish.
 *
 * Tested in test/unit/drivers/transport/serial-transport.test.ts (the transport contract on a socat
 * pty, where socat exists) and test/integration/helpers.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentError } from '../../src/core/errors.js';

export interface SocatPair {
  hostLink: string;
  deviceLink: string;
  process: ChildProcess;
  close(): Promise<void>;
}

export async function createSocatPair(hostLink: string, timeoutMs = 5000): Promise<SocatPair> {
  if (!existsSync(dirname(hostLink))) {
    throw new AgentError(
      'CLI_USAGE',
      `the folder of --link ${hostLink} does not exist`,
      { hostLink },
      { hint: 'pick a path in an existing folder, for example /tmp/ttyR30X' },
    );
  }
  if (existsSync(hostLink)) {
    throw new AgentError(
      'TRANSPORT_OPEN_FAILED',
      `${hostLink} already exists`,
      { hostLink },
      { hint: 'another simulator may be serving there; stop it or pick another --link path', retryable: false },
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'sim-pty-'));
  const deviceLink = join(dir, 'device');
  const proc = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${deviceLink}`, `pty,raw,echo=0,link=${hostLink}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let spawnError: Error | undefined;
  proc.on('error', (e) => (spawnError = e));
  proc.stderr?.on('data', (d: Buffer) => (stderr += d));
  const deadline = Date.now() + timeoutMs;
  while (!(existsSync(deviceLink) && existsSync(hostLink) && /starting data transfer loop/.test(stderr))) {
    if (spawnError) {
      throw new AgentError(
        'TRANSPORT_OPEN_FAILED',
        `could not start socat: ${spawnError.message}`,
        {},
        { hint: 'install socat (sudo apt install socat)', cause: spawnError },
      );
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill();
      throw new AgentError(
        'TRANSPORT_OPEN_FAILED',
        `socat did not create the pty pair: ${stderr.trim().split('\n').pop() ?? ''}`,
        { hostLink },
        { hint: 'check that socat is installed and that the --link folder is writable' },
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    hostLink,
    deviceLink,
    process: proc,
    close: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        proc.once('exit', done);
        proc.kill('SIGTERM');
      }),
  };
}
