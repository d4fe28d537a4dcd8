/**
 * A real MQTT broker for tests: Mosquitto on a free loopback port where the binary exists (the
 * full CI leg installs it), the in-process aedes broker otherwise. `startTlsBroker` is a broker as
 * a site runs one: TLS with a certificate from a CA made here (selfsigned, in-process), anonymous
 * clients refused, one user with a password.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { Aedes, type AuthenticateError } from 'aedes';
import { generate } from 'selfsigned';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../src/embedded/broker.js';
import { which } from './system.js';

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

/** Mosquitto's path, or null where it is missing (or hidden by EDGE_AGENT_TEST_HIDE). */
export function mosquittoPath(): string | null {
  return which('mosquitto');
}

async function waitForPort(port: number, timeoutMs = 5000): Promise<void> {
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
    onExit = () => reject(new Error(`mosquitto exited at start: port ${port} is taken (or ${conf} is wrong)`));
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

interface Mosquitto {
  port: number;
  /** Kills it; resolves once it has exited. */
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** Mosquitto with `lines(port)` as its config, on a free port (three tries), in its own folder. */
async function startMosquitto(bin: string, dir: string, lines: (port: number) => string[]): Promise<Mosquitto> {
  const conf = join(dir, 'mosquitto.conf');
  let port = 0;
  let proc: ChildProcess | null = null;
  for (let attempt = 1; !proc; attempt++) {
    port = await freePort();
    writeFileSync(conf, [...lines(port), 'persistence false', ''].join('\n'));
    try {
      proc = await spawnMosquitto(bin, conf, port);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        const p = proc;
        if (!p || p.exitCode !== null || p.signalCode !== null) return resolve(); // a second stop must not wait for an exit already seen
        p.once('exit', () => resolve());
        p.kill('SIGKILL');
      }),
    restart: async () => {
      proc = await spawnMosquitto(bin, conf, port);
    },
  };
}

export async function startBroker(options: { prefer?: 'mosquitto' | 'aedes' } = {}): Promise<TestBroker> {
  const bin = options.prefer === 'aedes' ? null : mosquittoPath();
  if (bin) {
    const dir = mkdtempSync(join(tmpdir(), 'mosquitto-'));
    const m = await startMosquitto(bin, dir, (port) => [`listener ${port} 127.0.0.1`, 'allow_anonymous true']);
    return {
      url: `mqtt://127.0.0.1:${m.port}`,
      port: m.port,
      kind: 'mosquitto',
      // The folder stays for restart(); it goes with the test file's sandbox.
      stop: m.stop,
      restart: m.restart,
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

/**
 * aedes in this process on a loopback port, with the message ids of the PUBACKs (and PUBCOMPs) it
 * received from subscribers and the count of clients connected: tests that must see when a client
 * acknowledges, or that it went, use it.
 */
export async function startAckingBroker(): Promise<{ url: string; acks: number[]; clients(): number; stop(): Promise<void> }> {
  const broker = await Aedes.createBroker();
  const acks: number[] = [];
  broker.on('ack', (packet) => {
    if (packet && 'messageId' in packet && packet.messageId !== undefined) acks.push(packet.messageId);
  });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `mqtt://127.0.0.1:${(server.address() as { port: number }).port}`,
    acks,
    clients: () => broker.connectedClients,
    stop: async () => {
      await new Promise<void>((r) => broker.close(() => r()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface TestCertificates {
  /** PEM files: the CA's certificate, and the server's certificate (for IP 127.0.0.1) and key. */
  ca: string;
  cert: string;
  key: string;
}

/** A CA and a server certificate for 127.0.0.1 signed by it, made in this process (no openssl). */
export async function makeCertificates(dir: string): Promise<TestCertificates> {
  const days = (n: number) => new Date(Date.now() + n * 86_400_000);
  const options = { keyType: 'ec', algorithm: 'sha256', notBeforeDate: days(-1), notAfterDate: days(2) } as const;
  const ca = await generate([{ name: 'commonName', value: 'edge-agent test CA' }], {
    ...options,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    ...options,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
  writeFileSync(files.ca, ca.cert);
  writeFileSync(files.cert, server.cert);
  writeFileSync(files.key, server.private, { mode: 0o600 });
  return files;
}

export interface TlsBroker {
  /** `mqtts://127.0.0.1:PORT` */
  url: string;
  kind: 'mosquitto' | 'aedes';
  /** The CA that signed the broker's certificate (a PEM file). */
  ca: string;
  stop(): Promise<void>;
}

/**
 * TLS, anonymous clients refused, `user` with `password`: Mosquitto (with mosquitto_passwd) or
 * aedes behind `tls.createServer` with an `authenticate` hook.
 */
export async function startTlsBroker(kind: 'mosquitto' | 'aedes', user: string, password: string): Promise<TlsBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'mqtt-tls-broker-'));
  const certs = await makeCertificates(dir);
  if (kind === 'mosquitto') {
    const bin = which('mosquitto');
    const passwdBin = which('mosquitto_passwd');
    if (!bin || !passwdBin) throw new Error('mosquitto and mosquitto_passwd are needed: declare the suite with describe.skipIf(!has(...))');
    const passwd = spawnSync(passwdBin, ['-b', '-c', join(dir, 'passwd'), user, password], { encoding: 'utf8' });
    if (passwd.status !== 0) throw new Error(`mosquitto_passwd failed: ${passwd.stderr}`);
    const m = await startMosquitto(bin, dir, (port) => [
      `listener ${port} 127.0.0.1`,
      `cafile ${certs.ca}`,
      `certfile ${certs.cert}`,
      `keyfile ${certs.key}`,
      'allow_anonymous false',
      `password_file ${join(dir, 'passwd')}`,
      'user root',
    ]);
    return {
      url: `mqtts://127.0.0.1:${m.port}`,
      kind,
      ca: certs.ca,
      stop: async () => {
        await m.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const broker = await Aedes.createBroker({
    authenticate: (_client, username, pass, done) => {
      if (username === user && pass?.toString('utf8') === password) return done(null, true);
      const err = new Error('bad username or password') as AuthenticateError;
      err.returnCode = 4; // BAD_USERNAME_OR_PASSWORD
      done(err, null);
    },
  });
  const sockets = new Set<Socket>();
  const server = createTlsServer({ cert: readFileSync(certs.cert), key: readFileSync(certs.key) }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  server.on('tlsClientError', () => undefined); // a client that does not trust the CA hangs up
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `mqtts://127.0.0.1:${(server.address() as { port: number }).port}`,
    kind,
    ca: certs.ca,
    stop: async () => {
      await new Promise<void>((r) => broker.close(() => r()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
