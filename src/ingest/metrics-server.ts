/**
 * The ingest's HTTP face for monitoring: `GET /metrics` (Prometheus text, from the ingest's
 * registry) and `GET /health` (JSON, 200 when healthy, 503 otherwise); anything else is 404.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError } from '../core/errors.js';

export interface MetricsSource {
  /** The exposition of this moment, and its Content-Type. */
  metrics(): Promise<string>;
  contentType: string;
  /** The health document; `healthy` decides the status. */
  health(): { healthy: boolean } & Record<string, unknown>;
}

/** Listens on `host:port`; resolves with the server and its URL, or rejects with INGEST_METRICS_LISTEN. */
export async function listenMetrics(port: number, host: string, source: MetricsSource): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      source.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': source.contentType });
          res.end(text);
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`metrics failed: ${(err as Error).message}\n`);
        },
      );
    } else if (req.method === 'GET' && path === '/health') {
      const health = source.health();
      res.writeHead(health.healthy ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(health));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('GET /metrics or /health\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new AgentError(
          'INGEST_METRICS_LISTEN',
          `cannot listen on ${host}:${port} for /metrics: ${err.message}`,
          { host, port, errno: err.code ?? null },
          { cause: err },
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return { server, url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` };
}
