/**
 * A real MQTT broker for tests: Mosquitto on a free loopback port where the binary exists
 * (CI guarantees it), the in-process aedes broker otherwise.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../src/embedded/broker.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestBroker {
  url: string;
  port: number;
  kind: 'mosquitto' | 'aedes';
  /** Stops the broker (a test can start it again with `restart`). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export function mosquittoPath(): string | null {
  for (const p of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto']) {
    const r = spawnSync(p, ['-h'], { stdio: 'ignore' });
    if (!r.error) return p;
  }
  return null;
}

async function waitForPort(port: number, timeoutMs = 5000): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`broker did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Mosquitto on `port`; resolves once it listens. A port taken meanwhile (a free port is only free
 * when asked: another process may bind it before mosquitto does) makes mosquitto exit at once,
 * which is an error naming the port, not a wait for a listener that never comes.
 */
async function spawnMosquitto(bin: string, conf: string, port: number): Promise<ChildProcess> {
  const proc = spawn(bin, ['-c', conf], { stdio: 'ignore' });
  let onExit!: () => void;
  const exited = new Promise<never>((_, reject) => {
    onExit = () => reject(new Error(`mosquitto exited at start: port ${port} is taken`));
    proc.once('exit', onExit);
  });
  try {
    await Promise.race([waitForPort(port), exited]);
  } catch (err) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    throw err;
  } finally {
    proc.off('exit', onExit);
    exited.catch(() => undefined);
  }
  return proc;
}

export async function startBroker(options: { prefer?: 'mosquitto' | 'aedes' } = {}): Promise<TestBroker> {
  const bin = options.prefer === 'aedes' ? null : mosquittoPath();
  if (bin) {
    const dir = mkdtempSync(join(tmpdir(), 'mosquitto-'));
    const conf = join(dir, 'mosquitto.conf');
    let port = 0;
    let proc: ChildProcess | null = null;
    for (let attempt = 1; !proc; attempt++) {
      port = await freePort();
      writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
      try {
        proc = await spawnMosquitto(bin, conf, port);
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    const start = async () => {
      proc = await spawnMosquitto(bin, conf, port);
    };
    return {
      url: `mqtt://127.0.0.1:${port}`,
      port,
      kind: 'mosquitto',
      stop: () =>
        new Promise<void>((resolve) => {
          const p = proc;
          if (!p || p.exitCode !== null || p.signalCode !== null) return resolve(); // a second stop must not wait for an exit already seen
          p.once('exit', () => resolve());
          p.kill('SIGKILL');
        }),
      restart: start,
    };
  }
  const port = await freePort();
  let embedded: EmbeddedBroker | null = await startEmbeddedBroker(port);
  return {
    url: embedded.url,
    port,
    kind: 'aedes',
    stop: async () => {
      await embedded?.close();
      embedded = null;
    },
    restart: async () => {
      embedded = await startEmbeddedBroker(port);
    },
  };
}
