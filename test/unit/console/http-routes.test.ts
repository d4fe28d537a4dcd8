/** The console's routes over real HTTP on 127.0.0.1, without a broker: what each answers, and the login, host and origin rules. */
import { request } from 'node:http';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PageCommands } from '../../../src/console/commands.js';
import type { ConsoleContext } from '../../../src/console/console-context.js';
import { FleetView } from '../../../src/console/fleet-view.js';
import { ConsoleHttp } from '../../../src/console/http-routes.js';
import { LiveUpdates } from '../../../src/console/live-updates.js';
import { ConsoleLogin } from '../../../src/console/login.js';
import { parsePrometheusText } from '../../helpers/prometheus.js';
import { feedTerminal, testContext } from '../../helpers/console-parts.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function routes(ctx: ConsoleContext, where = { host: '127.0.0.1', port: 0 }): ConsoleHttp {
  const view = new FleetView(ctx);
  const live = new LiveUpdates(ctx, view);
  cleanup.push(() => live.stop());
  return new ConsoleHttp(ctx, { view, live, commands: new PageCommands(ctx) }, where);
}

async function started(ctx: ConsoleContext) {
  const http = routes(ctx);
  await http.start();
  cleanup.push(() => http.stop());
  const port = http.port;
  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
          if (path === '/api/events' && text.includes('event: snapshot')) res.destroy();
        });
        res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    call('POST', path, { origin: `http://127.0.0.1:${port}`, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body);
  return { http, call, post, port };
}

describe("the console's routes", () => {
  it('without a login: the page, its files, the fleet, a terminal, /healthz and /metrics; 404, 405, the Host and Origin checks', async () => {
    const ctx = testContext();
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
    const { http, call, post, port } = await started(ctx);
    expect(http.url).toBe(`http://127.0.0.1:${port}/`);
    const page = await call('GET', '/');
    expect([page.status, page.headers['content-type'], page.headers['x-frame-options']]).toEqual([200, 'text/html; charset=utf-8', 'DENY']);
    const js = await call('GET', '/assets/app.js');
    expect(js.status).toBe(200);
    expect((await call('GET', '/assets/app.js', { 'if-none-match': js.headers.etag as string })).status).toBe(304);
    expect((await call('GET', '/assets/login.html')).status).toBe(404);
    const fleet = JSON.parse((await call('GET', '/api/fleet')).body) as { terminals: Array<{ key: string }> };
    expect(fleet.terminals.map((t) => t.key)).toEqual(['plant-a/gate-1']);
    expect(JSON.parse((await call('GET', '/api/terminal?key=plant-a/gate-1')).body)).toMatchObject({ table: { key: 'plant-a/gate-1' } });
    const missing = await call('GET', '/api/terminal?key=x/y');
    expect([missing.status, JSON.parse(missing.body).error.code]).toEqual([404, 'CONSOLE_NOT_FOUND']);
    expect(JSON.parse((await call('GET', '/healthz')).body)).toEqual({ ok: true, mqttConnected: false, terminals: 1 });
    const metrics = await call('GET', '/metrics');
    expect(metrics.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parsePrometheusText(metrics.body);
    expect(families.get('edge_agent_terminal_up')!.samples.map((s) => s.labels.terminal)).toEqual(['gate-1']);
    expect(families.get('edge_agent_console_http_requests_total')!.samples[0]!.value).toBe(ctx.health.httpRequests);
    const login = await call('GET', '/login');
    expect([login.status, login.headers.location]).toEqual([303, '/']);
    expect((await call('GET', '/nothing')).status).toBe(404);
    expect((await call('PUT', '/')).status).toBe(405);
    expect((await call('GET', '/', { host: 'evil.example:80' })).status).toBe(421);
    const foreign = await call('POST', '/logout', { origin: 'http://evil.example' });
    expect([foreign.status, JSON.parse(foreign.body).error.code]).toEqual([403, 'CONSOLE_FORBIDDEN_ORIGIN']);
    const events = await call('GET', '/api/events');
    expect(events.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(events.body).toContain('event: snapshot');
    expect((await post('/logout', '')).status).toBe(303);
  });

  it('with a login: everything but /login, /healthz and /metrics needs a session; a wrong password is 401, too many 429', async () => {
    const login = await ConsoleLogin.create('long enough secret', 1);
    const { call, post } = await started(testContext({ login }));
    expect((await call('GET', '/')).headers.location).toBe('/login');
    expect((await call('GET', '/api/fleet')).status).toBe(401);
    expect((await call('GET', '/metrics')).status).toBe(200);
    expect((await call('GET', '/login?expired')).body).toContain('Your session ended');
    const wrong = await post('/login', 'password=nope');
    expect([wrong.status, wrong.body.includes('Wrong password.')]).toEqual([401, true]);
    const right = await post('/login', 'password=long+enough+secret');
    expect([right.status, right.headers.location]).toEqual([303, '/']);
    const cookie = String(right.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toMatch(/^edge_console_session=[A-Za-z0-9_-]{43}$/);
    expect((await call('GET', '/api/fleet', { cookie })).status).toBe(200);
    const out = await post('/logout', '', { cookie });
    expect([out.headers.location, String(out.headers['set-cookie'])]).toEqual(['/login', expect.stringContaining('Max-Age=0')]);
    expect((await call('GET', '/api/fleet', { cookie })).status).toBe(401);
    // The right password above forgot the first failure: five more make the address wait.
    for (let i = 0; i < 5; i++) await post('/login', 'password=nope');
    const throttled = await post('/login', 'password=long+enough+secret');
    expect([throttled.status, throttled.body.includes('Too many failed attempts')]).toEqual([429, true]);
    expect((await post('/login', `password=${'x'.repeat(5000)}`)).status).toBe(413);
  });

  it('refuses to listen beyond loopback without a login, a TLS file it cannot read, and a port in use', async () => {
    expect(() => routes(testContext(), { host: '0.0.0.0', port: 0 })).toThrow(expect.objectContaining({ code: 'CONSOLE_UNSAFE_HOST' }));
    expect(() => routes(testContext({ settings: { tls: { cert: '/nonexistent/cert.pem', key: '/nonexistent/key.pem' } } }))).toThrow(
      expect.objectContaining({ code: 'CONSOLE_TLS_UNREADABLE', context: { file: '/nonexistent/cert.pem' } }),
    );
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => taken.close(r)));
    const port = (taken.address() as { port: number }).port;
    await expect(routes(testContext(), { host: '127.0.0.1', port }).start()).rejects.toMatchObject({
      code: 'CONSOLE_LISTEN',
      message: expect.stringContaining('EADDRINUSE'),
    });
  });
});
