/**
 * The service seen by a plain HTTP client (fetch without our client, as curl would): the token
 * exchange, the exact status codes and HTTP statuses, every kind of bad input, one request-log
 * line per request, and a service that keeps serving after all of it; on each database the
 * service runs on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createAttendanceService, type AttendanceService } from '../../src/server/service.js';
import { SERVICE_DATABASES, type ServiceDatabase } from '../helpers/databases.js';

const CLIENT_ID = 'acme-attendance';
const basic = `Basic ${Buffer.from(`${CLIENT_ID}:`).toString('base64')}`;

function rawHttpSuite(database: ServiceDatabase): void {
  let service: AttendanceService;
  let url: string;
  let token: string;
  let auditToken: string;
  const logLines: Array<Record<string, unknown>> = [];

  async function getToken(apiKey: string, apiSecret: string): Promise<Response> {
    return fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: apiKey, password: apiSecret }).toString(),
    });
  }

  async function call(
    method: string,
    path: string,
    body?: unknown,
    tok: string | null = token,
  ): Promise<{ status: number; json: { statusCode: string; statusDescription?: string; returnValue: unknown }; headers: Headers }> {
    const headers: Record<string, string> = {};
    if (tok) headers.authorization = `Bearer ${tok}`;
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const res = await fetch(`${url}${path}`, init);
    return { status: res.status, json: (await res.json()) as never, headers: res.headers };
  }

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    });
    await database.start();
    const where = await database.serviceOptions();
    service = createAttendanceService({
      dbPath: where.dbPath,
      ...(where.biometricKey ? { biometricKey: where.biometricKey } : {}),
      clientId: CLIENT_ID,
      maxBodyBytes: 4096,
      limits: { maxEventsPerRequest: 10 },
      logger: pino({ level: 'info' }, sink),
    });
    const admin = await service.createApiKey('admin');
    const audit = await service.createApiKey('admin-audit');
    url = await service.listen(0, '127.0.0.1');
    const res = await getToken(admin.apiKey, admin.apiSecret);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    token = body.access_token;
    auditToken = ((await (await getToken(audit.apiKey, audit.apiSecret)).json()) as { access_token: string }).access_token;
  });
  afterAll(async () => {
    await service?.close();
    await database.stop();
  });

  describe('token endpoint', () => {
    it('refuses a wrong client id, grant type, key or secret with OAuth2 errors', async () => {
      const wrongClient = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('edge-agent:').toString('base64')}` },
        body: 'grant_type=password&username=a&password=b',
      });
      expect(wrongClient.status).toBe(401);
      expect(await wrongClient.json()).toMatchObject({ error: 'invalid_client' });
      const grant = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic },
        body: 'grant_type=client_credentials',
      });
      expect(grant.status).toBe(400);
      expect(await grant.json()).toMatchObject({ error: 'unsupported_grant_type' });
      const bad = await getToken('ak_nope', 'nope');
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ error: 'invalid_grant' });
      const get = await fetch(`${url}/oauth/token`);
      expect(get.status).toBe(405);
    });
  });

  describe('exact status codes of section 7 over plain HTTP', () => {
    it('user operations', async () => {
      expect(
        (await call('POST', '/api/attendance/user', { employeeCode: 'R1', firstName: 'Raw', lastName: 'One', status: 0 })).json.statusCode,
      ).toBe('SUCCESS');
      expect((await call('POST', '/api/attendance/user', { employeeCode: 'R2', firstName: '', lastName: 'X' })).json.statusCode).toBe(
        'FIRST_NAME_EMPTY',
      );
      expect((await call('POST', '/api/attendance/user', { employeeCode: 'R2', firstName: 'X', lastName: '' })).json.statusCode).toBe(
        'Last_NAME_EMPTY',
      );
      expect(
        (await call('POST', '/api/attendance/user', { employeeCode: 'R2', firstName: 'X', lastName: 'Y', email: 'x@' })).json.statusCode,
      ).toBe('INVALID_EMAIL');
      expect((await call('POST', '/api/attendance/user', { employeeCode: 'a/b', firstName: 'X', lastName: 'Y' })).json.statusCode).toBe(
        'INVALID_EMPCODE',
      );
      const got = await call('GET', '/api/attendance/user?code=R1');
      expect(got).toMatchObject({ status: 200, json: { statusCode: 'SUCCESS', returnValue: { employeeCode: 'R1', status: '0' } } });
      expect((await call('GET', '/api/attendance/user?code=NONE')).json.statusCode).toBe('USER_NOT_AVAILABLE');
      expect((await call('DELETE', '/attendance/api/user/NONE/')).json.statusCode).toBe('USER_NOT_AVAILABLE');
    });

    it('biometric operations', async () => {
      const env = await call('POST', '/api/attendance/biometric/R1/', [
        { modality: 'finger', template: 'AAECAw==' },
        { modality: 'voice', template: 'AA==' },
        { modality: 'iris' },
        { modality: 'face', image: 'AAECAw==' },
      ]);
      expect(env.status).toBe(200);
      expect(
        (env.json.returnValue as Array<{ statusCode: string; returnValue: unknown }>).map((i) => [i.statusCode, i.returnValue]),
      ).toEqual([
        ['SUCCESS', null],
        ['BIOMETRIC_TYPE_NOT_SUPPORTED', null],
        ['INVALID_PARAMETERS', null],
        ['FAILED_TO_EXTRACT', null],
      ]);
      expect((await call('POST', '/api/attendance/biometric/NONE/', [{ modality: 'finger', template: 'AA==' }])).json.statusCode).toBe(
        'USER_NOT_AVAILABLE',
      );
      expect((await call('DELETE', '/api/attendance/biometric/R1/')).json).toMatchObject({ statusCode: 'SUCCESS', returnValue: null });
      expect((await call('DELETE', '/api/attendance/biometric/NONE')).json.statusCode).toBe('USER_NOT_AVAILABLE');
    });

    it('event operations with per-item statuses (shiftName spelling accepted)', async () => {
      const env = await call('POST', '/api/attendance/event', [
        { employeeCode: 'R1', inTime: '2024-06-03 08:55:00', shiftName: 'GENERAL', tzOffset: 120 },
        { employeeCode: 'NONE', inTime: '2024-06-03 08:55:00' },
        { employeeCode: 'R1', outTime: '2024-06-03 17:05:00', tzOffset: 120 },
        { employeeCode: 'R1', outTime: '2024-06-04 17:05:00' },
      ]);
      expect(env.status).toBe(200);
      expect(env.json.statusCode).toBe('SUCCESS');
      const items = env.json.returnValue as Array<{ statusCode: string; returnValue: Record<string, unknown> | null }>;
      expect(items.map((i) => i.statusCode)).toEqual(['SUCCESS', 'USER_NOT_AVAILABLE', 'SUCCESS', 'INVALID_PARAMETERS']);
      expect(items[2]!.returnValue).toEqual({
        employeeCode: 'R1',
        inTime: '2024-06-03 08:55:00',
        outTime: '2024-06-03 17:05:00',
        shift: 'GENERAL',
        tzOffset: 120,
      });
      expect((await call('GET', '/api/attendance/event?from=2024-06-03&to=2024-06-04%2000:00:00')).json.statusCode).toBe(
        'INVALID_TIME_FORMAT',
      );
      expect(
        (await call('GET', '/api/attendance/event?code=NONE&from=2024-06-03%2000:00:00&to=2024-06-04%2000:00:00')).json.statusCode,
      ).toBe('USER_NOT_AVAILABLE');
      const del = await call('DELETE', '/api/attendance/event/R1/', [{ inTime: '2024-06-04 08:00:00' }]);
      expect((del.json.returnValue as Array<{ statusCode: string }>)[0]!.statusCode).toBe('INVALID_PARAMETERS');
    });

    it('the report, with every field of 2.5 and paging headers', async () => {
      const r = await call(
        'GET',
        '/api/attendance/report/workhour?from=2024-06-01%2000:00:00&to=2024-06-30%2023:59:59&grouptype=DAILY&pagenumber=1&pagesize=50',
      );
      expect(r.status).toBe(200);
      expect(r.headers.get('x-total-count')).toBe('1');
      expect(r.headers.get('x-page-size')).toBe('50');
      const row = (r.json.returnValue as Array<Record<string, unknown>>)[0]!;
      expect(Object.keys(row)).toEqual([
        'employeeCode',
        'firstName',
        'lastName',
        'customdata',
        'shiftHours',
        'shiftWorkHours',
        'workHours',
        'inOuttime',
        'productiveHours',
        'productiveWorkHours',
        'overtime',
        'earlyArrival',
        'lateArrival',
        'earlyDepature',
        'lateDepature',
        'totalUnProductiveHours',
        'actualBreakHours',
        'firstCheckin',
        'lastCheckout',
        'tzOffset',
      ]);
      expect(row).toMatchObject({ workHours: 490, lateArrival: 0, earlyArrival: 5, lateDepature: 5, tzOffset: 120 });
      expect((await call('GET', '/api/attendance/report/workhour?from=x&to=y')).json.statusCode).toBe('INVALID_PARAMETERS');
      expect(
        (await call('GET', '/api/attendance/report/workhour?from=2024-06-01%2000:00:00&to=2024-06-30%2023:59:59&pagesize=abc')).json
          .statusCode,
      ).toBe('INVALID_PARAMETERS');
    });
  });

  describe('bad input: an envelope, a fitting HTTP status, never a crash', () => {
    it.each([
      ['malformed JSON', 'POST', '/api/attendance/event', '[{"employeeCode":', 400, 'INVALID_PARAMETERS'],
      ['empty body', 'POST', '/api/attendance/user', '', 400, 'INVALID_PARAMETERS'],
      ['an object where an array belongs', 'POST', '/api/attendance/event', { employeeCode: 'R1' }, 400, 'INVALID_PARAMETERS'],
      [
        'a number where a string belongs',
        'POST',
        '/api/attendance/user',
        { employeeCode: 'R9', firstName: 42, lastName: 'X' },
        400,
        'INVALID_PARAMETERS',
      ],
      [
        'a bad status',
        'POST',
        '/api/attendance/user',
        { employeeCode: 'R9', firstName: 'A', lastName: 'X', status: 'maybe' },
        400,
        'INVALID_PARAMETERS',
      ],
      [
        'too many events',
        'POST',
        '/api/attendance/event',
        Array.from({ length: 11 }, () => ({ employeeCode: 'R1', inTime: '2024-01-01 08:00:00' })),
        400,
        'INVALID_PARAMETERS',
      ],
      ['a body over the limit', 'POST', '/api/attendance/event', 'x'.repeat(5000), 413, 'INVALID_PARAMETERS'],
      ['an unknown path', 'GET', '/api/attendance/nothing', undefined, 404, 'INVALID_PARAMETERS'],
      ['the report under the second path form', 'GET', '/attendance/api/report/workhour', undefined, 404, 'INVALID_PARAMETERS'],
      ['a method the path does not take', 'PUT', '/api/attendance/user', {}, 405, 'INVALID_PARAMETERS'],
      ['broken percent-encoding', 'DELETE', '/api/attendance/user/%E0%A4%A/', undefined, 400, 'INVALID_PARAMETERS'],
    ])('%s', async (_what, method, path, body, status, code) => {
      const r = await call(method, path, body);
      expect(r.status).toBe(status);
      expect(r.json.statusCode).toBe(code);
      expect(r.json.returnValue).toBeNull();
      expect(r.json.statusDescription).toBeTruthy();
    });

    it('missing, wrong and audit tokens', async () => {
      const missing = await call('GET', '/api/attendance/user?code=R1', undefined, null);
      expect(missing).toMatchObject({ status: 401, json: { statusCode: 'UNAUTHORIZED' } });
      expect(missing.headers.get('www-authenticate')).toContain('Bearer');
      expect((await call('GET', '/api/attendance/user?code=R1', undefined, 'forged')).status).toBe(401);
      const write = await call('POST', '/api/attendance/event', [{ employeeCode: 'R1', inTime: '2024-06-05 09:00:00' }], auditToken);
      expect(write).toMatchObject({ status: 403, json: { statusCode: 'FORBIDDEN', returnValue: null } });
      expect((await call('GET', '/api/attendance/user?code=R1', undefined, auditToken)).json.statusCode).toBe('SUCCESS');
    });

    it('answers garbage on the socket with 400 and keeps serving', async () => {
      const reply = await new Promise<string>((resolve, reject) => {
        const s = connect(Number(new URL(url).port), '127.0.0.1', () => s.write('GARBAGE \x00\x01 NOT HTTP\r\n\r\n'));
        let data = '';
        s.on('data', (d) => (data += d));
        s.on('end', () => resolve(data));
        s.on('error', reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 400/);
      expect((await call('GET', '/api/attendance/user?code=R1')).json.statusCode).toBe('SUCCESS');
    });

    it('writes one request-log line per request, without the token', async () => {
      logLines.length = 0;
      await call('GET', '/api/attendance/user?code=R1');
      await call('POST', '/api/attendance/event', '{oops');
      await call('GET', '/api/attendance/user?code=R1', undefined, null);
      const requests = logLines.filter((l) => l.msg === 'request');
      expect(requests.map((l) => [l.method, l.path, l.status, l.statusCode])).toEqual([
        ['GET', '/api/attendance/user', 200, 'SUCCESS'],
        ['POST', '/api/attendance/event', 400, 'INVALID_PARAMETERS'],
        ['GET', '/api/attendance/user', 401, 'UNAUTHORIZED'],
      ]);
      expect(typeof requests[0]!.ms).toBe('number');
      expect(JSON.stringify(logLines)).not.toContain(token);
    });
  });

  describe('listening', () => {
    it('a busy port is SERVER_LISTEN with a hint, and the service can still be closed', async () => {
      const where = await database.serviceOptions();
      const other = createAttendanceService({ dbPath: where.dbPath, ...(where.biometricKey ? { biometricKey: where.biometricKey } : {}) });
      try {
        await other.listen(Number(new URL(url).port), '127.0.0.1');
        expect.unreachable();
      } catch (err) {
        expect((err as { code: string }).code).toBe('SERVER_LISTEN');
        expect((err as { hint: string }).hint).toContain('--port');
      } finally {
        await other.close();
      }
    });
  });
}

for (const database of SERVICE_DATABASES) {
  describe.skipIf(!database.available)(`the attendance API over plain HTTP on ${database.label}`, () => rawHttpSuite(database));
}
