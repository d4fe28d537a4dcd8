/**
 * The in-process MQTT broker of the embedded default (aedes), on loopback only. A small site can
 * run on it, but a fleet wants a real broker (Mosquitto): point `mqtt.url` at it.
 *
 * Tested in test/integration/embedded-default.test.ts (the embedded default starts it on loopback and
 * says where it listens).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';

interface AedesBroker {
  handle(socket: Socket): void;
  close(cb: () => void): void;
}

export interface EmbeddedBroker {
  url: string;
  port: number;
  close(): Promise<void>;
}

const log = logger('agent:embedded-broker');

export async function startEmbeddedBroker(port = 0, host = '127.0.0.1'): Promise<EmbeddedBroker> {
  const { Aedes } = (await import('aedes')) as unknown as { Aedes: { createBroker(): Promise<AedesBroker> } };
  const broker = await Aedes.createBroker();
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new AgentError(
          'AGENT_BROKER_LISTEN',
          `the embedded MQTT broker cannot listen on ${host}:${port}: ${err.code ?? err.message}`,
          { host, port },
          { hint: 'choose another port or stop what uses it', cause: err },
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as { port: number }).port;
  log.info({ port: actual }, 'embedded MQTT broker listening');
  return {
    url: `mqtt://${host}:${actual}`,
    port: actual,
    close: async () => {
      await new Promise<void>((r) => broker.close(() => r()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
