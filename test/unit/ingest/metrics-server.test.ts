/** The ingest's /metrics and /health over real HTTP on 127.0.0.1. */
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { listenMetrics, type MetricsSource } from '../../../src/ingest/metrics-server.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function serve(source: MetricsSource, port = 0): Promise<string> {
  const { server, url } = await listenMetrics(port, '127.0.0.1', source);
  servers.push(server);
  return url;
}

describe('the ingest metrics server', () => {
  it('serves the exposition with its type, the health as JSON (503 when unhealthy), 404 elsewhere', async () => {
    let healthy = true;
    const url = await serve({
      metrics: async () => 'x_total 1\n',
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      health: () => ({ healthy, pending: 2 }),
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const metrics = await fetch(`${url}/metrics?x=1`);
    expect([metrics.status, metrics.headers.get('content-type'), await metrics.text()]).toEqual([
      200,
      'text/plain; version=0.0.4; charset=utf-8',
      'x_total 1\n',
    ]);
    const ok = await fetch(`${url}/health`);
    expect([ok.status, await ok.json()]).toEqual([200, { healthy: true, pending: 2 }]);
    healthy = false;
    expect((await fetch(`${url}/health`)).status).toBe(503);
    expect((await fetch(`${url}/other`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('answers 500 when the exposition fails, and stays up', async () => {
    const url = await serve({
      metrics: () => Promise.reject(new Error('boom')),
      contentType: 'text/plain',
      health: () => ({ healthy: true }),
    });
    const r = await fetch(`${url}/metrics`);
    expect([r.status, await r.text()]).toEqual([500, 'metrics failed: boom\n']);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it('says INGEST_METRICS_LISTEN when the port is taken', async () => {
    const source: MetricsSource = { metrics: async () => '', contentType: 'text/plain', health: () => ({ healthy: true }) };
    const port = Number(new URL(await serve(source)).port);
    await expect(serve(source, port)).rejects.toMatchObject({ code: 'INGEST_METRICS_LISTEN', context: { port, errno: 'EADDRINUSE' } });
  });
});
