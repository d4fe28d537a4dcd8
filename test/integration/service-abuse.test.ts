/**
 * The service sheds abuse, over real HTTP on loopback: token attempts limited per client address
 * and per API key (429 + Retry-After), scrypt work bounded in flight (503 at once, never queued),
 * slow clients cut by the header and request timeouts, connections capped, and a body over the
 * limit answered 413 (read from Content-Length, or counted for a chunked body) with the
 * connection closed afterwards, so the client reads the 413 instead of a reset.
 * Clients on 127.0.0.2 and 127.0.0.3 are other addresses than 127.0.0.1 (Linux loopback).
 * The HTTP suites run on every database the service stores on (SQLite, and PostgreSQL where it is
 * installed): the shedding sits above the store and must hold on both.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVE_HELP_DEFAULTS } from '../../src/cli/commands/serve.js';
import {
  createAttendanceService,
  DEFAULT_CLIENT_ID,
  DEFAULT_HTTP_LIMITS,
  DEFAULT_TOKEN_TTL_SEC,
  type AttendanceService,
  type AttendanceServiceOptions,
} from '../../src/server/service.js';
import { DEFAULT_TOKEN_GUARD, TokenGuard } from '../../src/server/token-guard.js';
import { killTree, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { SERVICE_DATABASES, type ServiceDatabase } from '../helpers/databases.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function serveOn(
  database: ServiceDatabase,
  options: Partial<AttendanceServiceOptions> = {},
): Promise<{ service: AttendanceService; url: URL; apiKey: string; apiSecret: string }> {
  const service = createAttendanceService({ ...(await database.serviceOptions()), ...options });
  cleanup.push(() => service.close());
  const { apiKey, apiSecret } = await service.createApiKey('admin');
  const url = new URL(await service.listen(0, '127.0.0.1'));
  return { service, url, apiKey, apiSecret };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const noKeepAlive = new Agent({ keepAlive: false });

function post(url: URL, path: string, headers: Record<string, string>, body: string, localAddress = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: 'POST', path, headers, agent: noKeepAlive, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function tokenAttempt(url: URL, apiKey: string, secret: string, from = '127.0.0.1'): Promise<Reply> {
  const form = new URLSearchParams({ grant_type: 'password', username: apiKey, password: secret }).toString();
  return post(
    url,
    '/oauth/token',
    { authorization: `Basic ${Buffer.from('edge-agent:').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    form,
    from,
  );
}

async function tokenOf(url: URL, apiKey: string, apiSecret: string): Promise<string> {
  const r = await tokenAttempt(url, apiKey, apiSecret, '127.0.0.3');
  expect(r.status).toBe(200);
  return (JSON.parse(r.body) as { access_token: string }).access_token;
}

/** Everything the server sends on a raw connection until it closes it, and how it closed. */
function rawExchange(
  url: URL,
  head: string,
  body: { chunk: Buffer; total: number } | null,
  options: { waitMs?: number } = {},
): Promise<{ text: string; closedBy: 'end' | 'reset' | 'timeout'; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s: Socket = connect(Number(url.port), '127.0.0.1');
    let text = '';
    let closedBy: 'end' | 'reset' | 'timeout' = 'end';
    const timer = setTimeout(() => {
      closedBy = 'timeout';
      s.destroy();
    }, options.waitMs ?? 10_000);
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') closedBy = 'reset';
    });
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedBy, ms: Date.now() - t0 });
    });
    s.write(head);
    if (!body) return;
    let sent = 0;
    const pump = () => {
      while (sent < body.total && !s.destroyed && s.writable) {
        sent += body.chunk.length;
        if (!s.write(body.chunk)) return void s.once('drain', pump);
      }
    };
    pump();
  });
}

/** A GET with a bearer token from `from`; resolves to the status and how long it took (ms). */
function timedGet(url: URL, path: string, token: string, from: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      { host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${token}` }, agent: noKeepAlive, localAddress: from },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * `sockets` connections from `from`, each sending a request that never ends (headers without
 * their blank line) and opening a new one whenever the service closes it: the flood of issue 28.
 * `first503` resolves with the first answer a refused connection reads.
 */
function connectionFlood(url: URL, from: string, sockets: number) {
  let stopped = false;
  let opened = 0;
  const open = new Set<Socket>();
  let answered: (text: string) => void = () => undefined;
  const first503 = new Promise<string>((r) => (answered = r));
  const one = () => {
    if (stopped) return;
    const s = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: from });
    opened++;
    open.add(s);
    let text = '';
    s.on('connect', () => s.write('GET /api/attendance/user?code=A HTTP/1.1\r\nHost: x\r\nX-Pad: '));
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.startsWith('HTTP/1.1 503')) answered(text);
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      open.delete(s);
      setImmediate(one);
    });
  };
  for (let i = 0; i < sockets; i++) one();
  return {
    first503,
    get opened() {
      return opened;
    },
    stop() {
      stopped = true;
      for (const s of open) s.destroy();
    },
  };
}

function sheddingSuites(database: ServiceDatabase): void {
  const serve = (options: Partial<AttendanceServiceOptions> = {}) => serveOn(database, options);
  beforeAll(() => database.start());
  afterAll(() => database.stop());

  describe('the token endpoint sheds abuse', () => {
    it('limits attempts per client address with 429 and Retry-After; other addresses are not affected', async () => {
      const { service, url, apiKey, apiSecret } = await serve({
        tokenGuard: { perAddress: { burst: 3, perMinute: 6 }, perKey: { burst: 100, perMinute: 100 } },
      });
      for (let i = 0; i < 3; i++) expect((await tokenAttempt(url, apiKey, 'wrong')).status).toBe(400);
      const asked = performance.now();
      const limited = await tokenAttempt(url, apiKey, apiSecret);
      expect(limited.status).toBe(429);
      // A refused client waits for its answer (the default 1 s, the shortest Retry-After), so trying again at once cannot
      // make the service answer thousands of refusals a second.
      expect(performance.now() - asked).toBeGreaterThanOrEqual(950);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(10);
      expect(JSON.parse(limited.body)).toMatchObject({ error: 'slow_down', error_description: expect.stringContaining('this address') });
      expect(limited.headers.connection).toBe('close');
      // Another address gets its token.
      expect((await tokenAttempt(url, apiKey, apiSecret, '127.0.0.2')).status).toBe(200);
      expect(service.stats().tokensRefused.address).toBe(1);
    });

    it('limits failed attempts per API key from any address; the right secret takes nothing, other keys go on', async () => {
      const { service, url, apiKey, apiSecret } = await serve({
        tokenGuard: { perAddress: { burst: 100, perMinute: 100 }, perKey: { burst: 3, perMinute: 6 } },
      });
      const other = await service.createApiKey('admin-audit');
      expect((await tokenAttempt(url, apiKey, apiSecret, '127.0.0.2')).status).toBe(200);
      const froms = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];
      for (const from of froms) expect((await tokenAttempt(url, apiKey, 'wrong', from)).status).toBe(400);
      const limited = await tokenAttempt(url, apiKey, apiSecret, '127.0.0.4');
      expect(limited.status).toBe(429);
      expect(JSON.parse(limited.body).error_description).toContain('this API key');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await tokenAttempt(url, other.apiKey, other.apiSecret, '127.0.0.4')).status).toBe(200);
      expect(service.stats().tokensRefused.key).toBe(1);
    });

    it('bounds scrypt work in flight: attempts finding every slot busy get 503 at once, not a place in a queue', async () => {
      const { service, url, apiKey } = await serve({
        tokenGuard: { maxVerifying: 1, perAddress: { burst: 1000, perMinute: 1000 }, perKey: { burst: 1000, perMinute: 1000 } },
      });
      const started = Date.now();
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          tokenAttempt(url, apiKey, `wrong-${i}`, `127.0.0.${2 + i}`).then((r) => ({ ...r, ms: Date.now() - started })),
        ),
      );
      const busy = replies.filter((r) => r.status === 503);
      expect(replies.filter((r) => r.status === 400).length).toBeGreaterThanOrEqual(1);
      expect(busy.length).toBeGreaterThanOrEqual(1);
      expect(busy.every((r) => r.headers['retry-after'] === '1' && JSON.parse(r.body).error === 'temporarily_unavailable')).toBe(true);
      // A refused attempt is answered before the slowest verification finished.
      expect(Math.min(...busy.map((r) => r.ms))).toBeLessThan(Math.max(...replies.filter((r) => r.status === 400).map((r) => r.ms)));
      expect(service.stats().tokensRefused.busy).toBe(busy.length);
    });
  });

  describe('slow and oversized requests', () => {
    it('answers a 100 MB body 413 without reading it and closes the connection: the client reads the 413, no reset', async () => {
      const { url, apiKey, apiSecret } = await serve({ maxBodyBytes: 4096 });
      const token = await tokenOf(url, apiKey, apiSecret);
      const body = Buffer.alloc(100 * 1024 * 1024, 0x20);
      for (const auth of [`Bearer ${token}`, 'Bearer not-a-token']) {
        const res = await fetch(`${url.origin}/api/attendance/event`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body,
        });
        expect(res.status).toBe(auth === 'Bearer not-a-token' ? 401 : 413);
        expect(res.headers.get('connection')).toBe('close');
        expect((await res.json()) as object).toMatchObject(
          auth === 'Bearer not-a-token'
            ? { statusCode: 'UNAUTHORIZED' }
            : { statusCode: 'INVALID_PARAMETERS', statusDescription: expect.stringContaining('4096') },
        );
      }
    });

    it('counts a chunked body as it comes and answers 413 once over the limit, then closes', async () => {
      const { url, apiKey, apiSecret } = await serve({ maxBodyBytes: 4096 });
      const token = await tokenOf(url, apiKey, apiSecret);
      const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')]);
      const r = await rawExchange(
        url,
        `POST /api/attendance/event HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        { chunk, total: 100 * 1024 * 1024 },
      );
      expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.text.toLowerCase()).toContain('connection: close');
      expect(r.closedBy).not.toBe('timeout');
      // The fetch client streams a chunked body the same way and reads the 413.
      const stream = new Blob([Buffer.alloc(20 * 1024 * 1024, 0x20)]).stream();
      const res = await fetch(`${url.origin}/api/attendance/event`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
    });

    it('does not tell a client that expects 100-continue to send a body over the limit', async () => {
      const { url, apiKey, apiSecret } = await serve({ maxBodyBytes: 4096 });
      const token = await tokenOf(url, apiKey, apiSecret);
      const r = await rawExchange(
        url,
        `POST /api/attendance/event HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\nExpect: 100-continue\r\n\r\n`,
        null,
      );
      expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.text).not.toContain('100 Continue');
      // Within the limit it is told to continue and the request is served.
      const body = JSON.stringify([{ employeeCode: 'NOBODY', inTime: '2024-01-01 08:00:00', tzOffset: 0 }]);
      const ok = await rawExchange(
        url,
        `POST /api/attendance/event HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n${body}`,
        null,
      );
      expect(ok.text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    });

    it('cuts a client whose headers or body do not arrive in time', async () => {
      const { url } = await serve({ http: { headersTimeoutMs: 500, requestTimeoutMs: 1000 } });
      const slowHeaders = await rawExchange(url, 'POST /oauth/token HTTP/1.1\r\nHost: x\r\n', null);
      expect(slowHeaders.closedBy).not.toBe('timeout');
      expect(slowHeaders.ms).toBeLessThan(5000);
      expect(slowHeaders.text).toMatch(/^HTTP\/1\.1 408 |^$/);
      const slowBody = await rawExchange(
        url,
        `POST /oauth/token HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${Buffer.from('edge-agent:').toString('base64')}\r\nContent-Length: 100\r\n\r\ngrant`,
        null,
      );
      expect(slowBody.closedBy).not.toBe('timeout');
      expect(slowBody.ms).toBeLessThan(5000);
      expect(slowBody.ms).toBeGreaterThanOrEqual(900);
      expect(slowBody.text).toMatch(/^HTTP\/1\.1 408 /);
    });

    it('keeps each address to its share of the connections: 600 reconnecting half-sent requests from 127.0.0.2 leave 127.0.0.1 served', async () => {
      const { service, url, apiKey, apiSecret } = await serve();
      const token = await tokenOf(url, apiKey, apiSecret);
      const flood = connectionFlood(url, '127.0.0.2', 600);
      cleanup.push(() => flood.stop());
      // The held connections of 127.0.0.2 are answered 503 with Retry-After after a second.
      const refusal = await flood.first503;
      expect(refusal).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
      expect(refusal).toMatch(/\r\nRetry-After: 1\r\n/);
      expect(refusal).toMatch(/too many connections from this address \(at most 64 at once\)/);
      const real = [];
      for (let i = 0; i < 25; i++) real.push(await timedGet(url, '/api/attendance/user?code=NOBODY', token, '127.0.0.1'));
      flood.stop();
      expect(real.map((r) => r.status)).toEqual(Array.from({ length: 25 }, () => 200));
      // Not held up behind the flood: each answered in well under the one-second hold.
      expect(Math.max(...real.map((r) => r.ms))).toBeLessThan(1000);
      const stats = service.stats();
      expect(stats.connectionsHeld).toBeGreaterThan(100);
      expect(flood.opened).toBeGreaterThan(600);
    });

    it('answers a request 503 after a second when its address has its share in flight; other addresses are served', async () => {
      const { service, url } = await serve({ http: { maxRequestsPerAddress: 2 } });
      // Two token requests from 127.0.0.2 whose bodies never finish: in flight until they time out.
      const head = `POST /oauth/token HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${Buffer.from('edge-agent:').toString('base64')}\r\nContent-Length: 100\r\n\r\ngrant`;
      const slow = Array.from({ length: 2 }, () => {
        const s = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: '127.0.0.2' }, () => s.write(head));
        s.on('error', () => undefined);
        cleanup.push(() => void s.destroy());
        return s;
      });
      await new Promise((r) => setTimeout(r, 200));
      const t0 = performance.now();
      const third = await post(url, '/oauth/token', {}, '', '127.0.0.2');
      // Held a second: a client with its share in flight cannot loop on refusals.
      expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
      expect(third.status).toBe(503);
      expect(third.headers['retry-after']).toBe('1');
      expect(JSON.parse(third.body)).toMatchObject({
        statusCode: 'ERROR',
        statusDescription: expect.stringContaining('at most 2 at once'),
      });
      const other = await post(url, '/oauth/token', {}, '', '127.0.0.3');
      expect(other.status).toBe(401);
      expect(service.stats().requestsRefused).toBe(1);
      for (const s of slow) s.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect((await post(url, '/oauth/token', {}, '', '127.0.0.2')).status).toBe(401);
    });

    it('closes connections over the cap as they come and serves again once they go', async () => {
      const { service, url } = await serve({ http: { maxConnections: 3 } });
      const held = await Promise.all(
        Array.from(
          { length: 3 },
          () =>
            new Promise<Socket>((resolve) => {
              const s = connect(Number(url.port), '127.0.0.1', () => resolve(s));
            }),
        ),
      );
      await new Promise((r) => setTimeout(r, 50));
      const over = await rawExchange(url, 'GET /api/attendance/user?code=A HTTP/1.1\r\nHost: x\r\n\r\n', null, { waitMs: 3000 });
      expect(over.text).toBe('');
      expect(over.closedBy).not.toBe('timeout');
      expect(service.stats().connectionsDropped).toBeGreaterThanOrEqual(1);
      for (const s of held) s.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const served = await rawExchange(url, 'GET /api/attendance/user?code=A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', null);
      expect(served.text).toMatch(/^HTTP\/1\.1 401 /);
    });
  });
}

for (const database of SERVICE_DATABASES) {
  describe.skipIf(!database.available)(`the service on ${database.label} sheds abuse`, () => sheddingSuites(database));
}

describe('the token guard', () => {
  it('refills a bucket over time and forgets the least recently used when full', () => {
    let now = 0;
    const guard = new TokenGuard({
      perAddress: { burst: 2, perMinute: 60 },
      perKey: { burst: 100, perMinute: 100 },
      maxTracked: 3,
      now: () => now,
    });
    const attempt = (addr: string) => {
      const a = guard.admit(addr, 'k');
      if (a.ok) a.done(true);
      return a.ok ? 0 : a.retryAfterSec;
    };
    expect([attempt('a'), attempt('a'), attempt('a')]).toEqual([0, 0, 1]);
    now += 1000;
    expect(attempt('a')).toBe(0);
    for (const addr of ['b', 'c', 'd', 'e']) attempt(addr);
    expect(guard.tracked.addresses).toBe(3);
  });
});

describe('serve --token-rate', () => {
  it("sets the per-address limit of the token endpoint (behind a load balancer every client has its address); the help states the service's defaults", async () => {
    expect(SERVE_HELP_DEFAULTS).toEqual({
      clientId: DEFAULT_CLIENT_ID,
      tokenTtlSec: DEFAULT_TOKEN_TTL_SEC,
      maxConnections: DEFAULT_HTTP_LIMITS.maxConnections,
      maxConnectionsPerAddress: DEFAULT_HTTP_LIMITS.maxConnectionsPerAddress,
      maxRequestsPerAddress: DEFAULT_HTTP_LIMITS.maxRequestsPerAddress,
      tokenRate: DEFAULT_TOKEN_GUARD.perAddress.burst,
    });
    expect(DEFAULT_TOKEN_GUARD.perAddress.perMinute).toBe(DEFAULT_TOKEN_GUARD.perAddress.burst);
    expect((await runCli(['serve', '--db', ':memory:', '--token-rate', '0'])).stderr).toContain('--token-rate must be at least 1');
    const db = join(mkdtempSync(join(tmpdir(), 'token-rate-')), 'service.db');
    const made = await runCli(['keys', 'create', '--db', db, '--create', '--role', 'admin', '--json']);
    const { apiKey } = JSON.parse(made.stdout) as { apiKey: string };
    const child = spawnCli(['serve', '--port', '0', '--db', db, '--token-rate', '2']);
    cleanup.push(() => killTree(child));
    const [, base] = await waitForLine(child, /listening on (http:\/\/\S+)/, 30_000, 'stdout');
    const url = new URL(base!);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await tokenAttempt(url, apiKey, 'wrong')).status);
    expect(statuses).toEqual([400, 400, 429]);
  });
});
