/**
 * The client's error mapping and token handling against a scripted HTTP server on loopback (the
 * contract tests in test/integration/api-*.test.ts run it against the real service).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AttendanceClient, parseRetryAfter } from '../../../src/api/client.js';
import { AgentError } from '../../../src/core/errors.js';
import { freePort } from '../../helpers/broker.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let apiHandler: Handler;
let tokenHandler: Handler;
let tokenRequests: Array<{ auth: string | undefined; body: string }>;
let apiRequests: Array<{ method: string; url: string; auth: string | undefined; body: string }>;
let tokenCounter = 0;

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};
const goodToken: Handler = (_req, _body, res) =>
  json(res, 200, { access_token: `tok-${++tokenCounter}`, token_type: 'bearer', expires_in: 3600 });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/oauth/token') {
        tokenRequests.push({ auth: req.headers.authorization, body });
        tokenHandler(req, body, res);
      } else {
        apiRequests.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
        apiHandler(req, body, res);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  tokenRequests = [];
  apiRequests = [];
  tokenHandler = goodToken;
  apiHandler = (_req, _body, res) =>
    json(res, 200, { statusCode: 'SUCCESS', returnValue: { employeeCode: 'E1', firstName: 'A', lastName: 'B', status: 0 } });
});

const client = (extra: Partial<ConstructorParameters<typeof AttendanceClient>[0]> = {}) =>
  new AttendanceClient({ baseUrl, clientId: 'my-client', apiKey: 'key-1', apiSecret: 's3cret&=', timeoutMs: 2000, ...extra });

async function failure(p: Promise<unknown>): Promise<AgentError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  }
  throw new Error('expected a failure');
}

describe('token', () => {
  it('uses the password grant with Basic base64(clientId:) and presents a Bearer token, cached', async () => {
    const c = client();
    const user = await c.getUser('E1');
    await c.getUser('E1');
    expect(user.returnValue?.status).toBe('0');
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]!.auth).toBe(`Basic ${Buffer.from('my-client:').toString('base64')}`);
    const form = new URLSearchParams(tokenRequests[0]!.body);
    expect(Object.fromEntries(form)).toEqual({ grant_type: 'password', username: 'key-1', password: 's3cret&=' });
    expect(apiRequests.map((r) => r.auth)).toEqual(['Bearer tok-1', 'Bearer tok-1']);
    expect(apiRequests[0]!.url).toBe('/api/attendance/user?code=E1');
  });

  it('refreshes before expiry (margin at most half the lifetime)', async () => {
    // lifetime 2 s, margin min(30 s, half of 2 s) = 1 s: the token is used for about 1 s
    tokenHandler = (_req, _body, res) => json(res, 200, { access_token: `tok-${++tokenCounter}`, expires_in: 2 });
    const c = client({ refreshMarginSec: 30 });
    await c.getUser('E1');
    await c.getUser('E1');
    expect(tokenRequests).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1100));
    await c.getUser('E1');
    expect(tokenRequests).toHaveLength(2);
  });

  it('shares one token request between concurrent calls', async () => {
    const c = client();
    await Promise.all([c.getUser('A'), c.getUser('B'), c.getUser('C')]);
    expect(tokenRequests).toHaveLength(1);
  });

  it('obtains a new token once on a 401, then succeeds', async () => {
    let first = true;
    apiHandler = (_req, _body, res) => {
      if (first) {
        first = false;
        return json(res, 401, { statusCode: 'UNAUTHORIZED', returnValue: null });
      }
      json(res, 200, { statusCode: 'SUCCESS', returnValue: null });
    };
    const c = client();
    const env = await c.deleteBiometrics('E1');
    expect(env.statusCode).toBe('SUCCESS');
    expect(tokenRequests).toHaveLength(2);
    expect(apiRequests.map((r) => r.auth)).toEqual([`Bearer tok-${tokenCounter - 1}`, `Bearer tok-${tokenCounter}`]);
  });

  it('API_UNAUTHORIZED when the 401 persists after one refresh (not retryable, no token in context)', async () => {
    apiHandler = (_req, _body, res) =>
      json(res, 401, { statusCode: 'UNAUTHORIZED', statusDescription: 'unknown access token', returnValue: null });
    const err = await failure(client().getUser('E1'));
    expect(err.code).toBe('API_UNAUTHORIZED');
    expect(err.retryable).toBe(false);
    expect(err.context).toMatchObject({ operation: 'getUser', status: 401, path: '/api/attendance/user' });
    expect(JSON.stringify(err.context)).not.toContain('tok-');
    expect(apiRequests).toHaveLength(2);
  });

  it('API_AUTH_FAILED when the token endpoint refuses key or client', async () => {
    tokenHandler = (_req, _body, res) => json(res, 400, { error: 'invalid_grant', error_description: 'unknown API key or wrong secret' });
    const err = await failure(client().getUser('E1'));
    expect(err.code).toBe('API_AUTH_FAILED');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('invalid_grant');
    expect(JSON.stringify(err.context)).not.toContain('s3cret');
    expect(apiRequests).toHaveLength(0);
  });

  it('API_BAD_RESPONSE when the token answer has no access_token', async () => {
    tokenHandler = (_req, _body, res) => json(res, 200, '<html>login</html>');
    const err = await failure(client().getUser('E1'));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.retryable).toBe(true);
  });
});

describe('errors a caller can act on', () => {
  it('API_HTTP_5XX (retryable) with the envelope in context', async () => {
    apiHandler = (_req, _body, res) => json(res, 500, { statusCode: 'ERROR', statusDescription: 'system error', returnValue: null });
    const err = await failure(client().addEvents([{ employeeCode: 'E1', inTime: '2024-01-01 08:00:00' }]));
    expect(err.code).toBe('API_HTTP_5XX');
    expect(err.retryable).toBe(true);
    expect(err.context).toMatchObject({ operation: 'addEvents', status: 500, statusCode: 'ERROR' });
  });

  it('API_RATE_LIMITED with retryAfterMs from seconds or an HTTP date', async () => {
    apiHandler = (_req, _body, res) => json(res, 429, 'slow down', { 'retry-after': '7' });
    const err = await failure(client().getUser('E1'));
    expect(err.code).toBe('API_RATE_LIMITED');
    expect(err.retryable).toBe(true);
    expect(err.context.retryAfterMs).toBe(7000);
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(parseRetryAfter('Mon, 01 Jan 2024 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('API_FORBIDDEN for 403, API_HTTP_4XX for other 4xx (not retryable)', async () => {
    apiHandler = (_req, _body, res) => json(res, 403, { statusCode: 'FORBIDDEN', statusDescription: 'read only', returnValue: null });
    const forbidden = await failure(client().deleteUser('E1'));
    expect(forbidden.code).toBe('API_FORBIDDEN');
    expect(forbidden.retryable).toBe(false);
    apiHandler = (_req, _body, res) => json(res, 404, 'not here');
    const notFound = await failure(client().getUser('E1'));
    expect(notFound.code).toBe('API_HTTP_4XX');
    expect(notFound.context.status).toBe(404);
    expect(notFound.retryable).toBe(false);
  });

  it('API_BAD_RESPONSE for a body that is not JSON or not an envelope', async () => {
    apiHandler = (_req, _body, res) => json(res, 200, '<html>captive portal</html>');
    expect((await failure(client().getUser('E1'))).code).toBe('API_BAD_RESPONSE');
    apiHandler = (_req, _body, res) => json(res, 200, { ok: true });
    expect((await failure(client().getUser('E1'))).code).toBe('API_BAD_RESPONSE');
    apiHandler = (_req, _body, res) => json(res, 200, { statusCode: 'SUCCESS', returnValue: { not: 'an array' } });
    expect((await failure(client().addEvents([{ employeeCode: 'E1', inTime: '2024-01-01 08:00:00' }]))).code).toBe('API_BAD_RESPONSE');
  });

  it('API_TIMEOUT when no answer comes in time (retryable)', async () => {
    apiHandler = () => undefined; // never answers
    const err = await failure(client({ timeoutMs: 300 }).getUser('E1'));
    expect(err.code).toBe('API_TIMEOUT');
    expect(err.retryable).toBe(true);
  });

  it('API_NETWORK when nothing listens (retryable)', async () => {
    const port = await freePort();
    const err = await failure(client({ baseUrl: `http://127.0.0.1:${port}` }).getUser('E1'));
    expect(err.code).toBe('API_NETWORK');
    expect(err.retryable).toBe(true);
    expect(err.context.errno).toBe('ECONNREFUSED');
  });

  it('CORE_ABORTED when the caller aborts', async () => {
    apiHandler = () => undefined;
    const ac = new AbortController();
    const p = client().addEvents([{ employeeCode: 'E1', inTime: '2024-01-01 08:00:00' }], { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const err = await failure(p);
    expect(err.code).toBe('CORE_ABORTED');
  });

  it('API_NOT_SUPPORTED for the report under the attendance path form, without a request', async () => {
    const err = await failure(
      client({ pathForm: 'attendance' }).workHourReport({ from: '2024-01-01 00:00:00', to: '2024-01-02 00:00:00' }),
    );
    expect(err.code).toBe('API_NOT_SUPPORTED');
    expect(apiRequests).toHaveLength(0);
  });

  it('returns non-SUCCESS envelopes instead of throwing', async () => {
    apiHandler = (_req, _body, res) =>
      json(res, 200, { statusCode: 'USER_NOT_AVAILABLE', statusDescription: 'no such user', returnValue: null });
    const env = await client().getUser('nobody');
    expect(env).toEqual({ statusCode: 'USER_NOT_AVAILABLE', statusDescription: 'no such user', returnValue: null });
  });
});

describe('wire shapes', () => {
  it('sends tzOffset in the configured unit and reads it back in minutes; reads shiftName', async () => {
    apiHandler = (_req, body, res) => {
      const sent = JSON.parse(body) as Array<Record<string, unknown>>;
      json(res, 200, {
        statusCode: 'SUCCESS',
        returnValue: sent.map((e) => ({ statusCode: 'SUCCESS', returnValue: { ...e, shift: undefined, shiftName: 'NIGHT' } })),
      });
    };
    const env = await client({ tzOffsetUnit: 'hours' }).addEvents([
      { employeeCode: 'E1', inTime: '2024-01-01 08:00:00', tzOffset: 330, shift: 'NIGHT' },
    ]);
    expect(JSON.parse(apiRequests[0]!.body)).toEqual([
      { employeeCode: 'E1', inTime: '2024-01-01 08:00:00', shift: 'NIGHT', tzOffset: 5.5 },
    ]);
    expect(env.returnValue![0]!.returnValue).toEqual({
      employeeCode: 'E1',
      inTime: '2024-01-01 08:00:00',
      outTime: null,
      shift: 'NIGHT',
      tzOffset: 330,
    });
  });

  it('uses the /attendance/api form when configured', async () => {
    await client({ pathForm: 'attendance' }).deleteUser('E 1');
    expect(apiRequests[0]).toMatchObject({ method: 'DELETE', url: '/attendance/api/user/E%201/' });
  });

  it('sends the report query with groupcodes comma-separated', async () => {
    apiHandler = (_req, _body, res) =>
      json(res, 200, { statusCode: 'SUCCESS', returnValue: [{ employeeCode: 'E1', firstName: 'A', workTime: 60 }] });
    const env = await client().workHourReport({
      from: '2024-01-01 00:00:00',
      to: '2024-01-31 23:59:59',
      grouptype: 'WEEKLY',
      groupcodes: ['G1', 'G2'],
      pagesize: 10,
    });
    const q = new URL(apiRequests[0]!.url, baseUrl).searchParams;
    expect(Object.fromEntries(q)).toEqual({
      from: '2024-01-01 00:00:00',
      to: '2024-01-31 23:59:59',
      grouptype: 'WEEKLY',
      groupcodes: 'G1,G2',
      pagesize: '10',
    });
    expect(env.returnValue![0]!.workHours).toBe(60);
  });
});
