/**
 * A fault-injecting HTTP proxy for tests: forwards to a target (the real service) and, for the
 * requests whose path matches, applies queued faults one request at a time:
 * - `{kind: 'status', status, body?, headers?}`: answers that status without forwarding;
 * - `{kind: 'stall'}`: accepts the request and never answers (the client times out);
 * - `{kind: 'stall-after-forward'}`: forwards (the service acts on it) but never answers;
 * - `{kind: 'reset'}`: destroys the connection at once;
 * - `{kind: 'garbage'}`: answers 200 with a body that is not the envelope;
 * - `{kind: 'unauthorized'}`: answers 401 (an expired or revoked token).
 * `down()` makes every request fail with a reset until `up()`. `failWhenBodyIncludes(text)`
 * answers HTTP 500 to every request whose body contains `text` (a poison item) until cleared.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';

export type Fault =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'stall' }
  | { kind: 'stall-after-forward' }
  | { kind: 'reset' }
  | { kind: 'garbage' }
  | { kind: 'unauthorized' };

export interface FaultProxy {
  url: string;
  /** Queues `fault` for the next `times` requests whose path contains `pathContains`. */
  inject(fault: Fault, times?: number, pathContains?: string): void;
  clear(): void;
  down(): void;
  up(): void;
  /** Answers HTTP 500 to every request whose body contains `text`; null clears it. */
  failWhenBodyIncludes(text: string | null): void;
  /** Requests seen per path (including faulted ones). */
  readonly seen: Map<string, number>;
  /** Faults applied so far, in order. */
  readonly applied: string[];
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const t = new URL(target);
  const queue: Array<{ fault: Fault; pathContains: string }> = [];
  const seen = new Map<string, number>();
  const applied: string[] = [];
  const sockets = new Set<Socket>();
  let isDown = false;
  let poison: string | null = null;

  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse | null) => {
    const out = request(
      { host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } },
      (up) => {
        if (!res) {
          up.resume();
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res?.destroy());
    out.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      seen.set(path, (seen.get(path) ?? 0) + 1);
      if (isDown) {
        applied.push('down');
        req.socket.destroy();
        return;
      }
      const i = queue.findIndex((q) => path.includes(q.pathContains));
      const fault = i >= 0 ? queue.splice(i, 1)[0]!.fault : null;
      const body = Buffer.concat(chunks);
      if (!fault && poison !== null && body.includes(poison)) {
        applied.push('poison 500');
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal server error');
        return;
      }
      if (!fault) return forward(req, body, res);
      applied.push(fault.kind === 'status' ? `status ${fault.status}` : fault.kind);
      switch (fault.kind) {
        case 'status':
          res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
          res.end(
            fault.body ?? JSON.stringify({ statusCode: 'ERROR', statusDescription: `injected HTTP ${fault.status}`, returnValue: null }),
          );
          return;
        case 'stall':
          return; // never answered
        case 'stall-after-forward':
          return forward(req, body, null);
        case 'reset':
          req.socket.destroy();
          return;
        case 'garbage':
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<html><body>captive portal: please log in</body></html>');
          return;
        case 'unauthorized':
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ statusCode: 'UNAUTHORIZED', statusDescription: 'the access token expired', returnValue: null }));
          return;
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    inject(fault, times = 1, pathContains = '') {
      for (let k = 0; k < times; k++) queue.push({ fault, pathContains });
    },
    clear() {
      queue.length = 0;
      poison = null;
    },
    down() {
      isDown = true;
      for (const s of sockets) s.destroy();
    },
    up() {
      isDown = false;
    },
    failWhenBodyIncludes(text) {
      poison = text;
    },
    seen,
    applied,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface TcpRelay {
  url: string;
  /** While on, what the upstream sends (an MQTT broker's PUBACKs) is held back; off releases it. */
  hold(on: boolean): void;
  /** While on, new connections are closed at once and current ones are cut (an unreachable upstream). */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

/** A TCP relay to `127.0.0.1:port` (an MQTT broker) with the switches above. */
export async function startTcpRelay(port: number, scheme = 'mqtt'): Promise<TcpRelay> {
  let holding = false;
  let refusing = false;
  const pending: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => (holding ? pending.push(() => client.write(d)) : client.write(d)));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `${scheme}://127.0.0.1:${(server.address() as { port: number }).port}`,
    hold(on) {
      holding = on;
      if (!on) for (const f of pending.splice(0)) f();
    },
    refuse(on) {
      refusing = on;
      if (on) for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
