/**
 * Several attendance services on one PostgreSQL database are replicas of one service: real
 * `edge-agent serve --db postgres://…` processes (keys made by `edge-agent keys create` on the
 * same URL), and services in this process where a test needs an option the CLI does not have.
 * Tokens of one are accepted by all; the same events sent to several at once are stored once;
 * check-outs sent to several at once each close their own check-in; the enrolment limit holds
 * across replicas; a revocation reaches every replica; a replica with another biometric key, or
 * none, refuses to start; a database outage is 503 and the service recovers by itself.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import type { AttendanceEvent } from '../../src/api/types.js';
import { createAttendanceService } from '../../src/server/service.js';
import { killTree, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { hasPostgres, POSTGRES_PROGRAMS, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startService, startServiceProcess, type ChildService, type TestService } from '../helpers/service.js';
import { needs } from '../helpers/system.js';

const client = (s: TestService, extra: Partial<ConstructorParameters<typeof AttendanceClient>[0]> = {}) =>
  new AttendanceClient({ baseUrl: s.url, clientId: s.clientId, apiKey: s.apiKey, apiSecret: s.apiSecret, timeoutMs: 15_000, ...extra });

describe.skipIf(!hasPostgres())(`replicas of the attendance service on one PostgreSQL database (${needs(...POSTGRES_PROGRAMS)})`, () => {
  let pgServer: TestPostgres;
  let dir: string;
  const key = randomBytes(32);
  let keyFile: string;
  const keyEnv = 'EDGE_AGENT_BIOMETRIC_KEY_FILE';
  const savedKeyEnv = process.env[keyEnv];

  beforeAll(async () => {
    pgServer = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'edge-agent-replicas-'));
    keyFile = join(dir, 'biometric.key');
    writeFileSync(keyFile, `${key.toString('hex')}\n`, { mode: 0o600 });
    // The serve processes inherit it: every replica seals with the same key.
    process.env[keyEnv] = keyFile;
  });
  afterAll(async () => {
    if (savedKeyEnv === undefined) delete process.env[keyEnv];
    else process.env[keyEnv] = savedKeyEnv;
    await pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('three serve processes', () => {
    let url: string;
    const replicas: ChildService[] = [];

    beforeAll(async () => {
      url = await pgServer.createDatabase('replicas');
      // The first replica's `keys create` migrates; the others start on the migrated database.
      replicas.push(await startServiceProcess({ dbPath: url }));
      replicas.push(...(await Promise.all([startServiceProcess({ dbPath: url }), startServiceProcess({ dbPath: url })])));
    }, 120_000);
    afterAll(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
    });

    it("a token issued by one replica is accepted by every replica, and so is every replica's key", async () => {
      const res = await fetch(`${replicas[0]!.url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${replicas[0]!.clientId}:`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'password', username: replicas[1]!.apiKey, password: replicas[1]!.apiSecret }).toString(),
      });
      expect(res.status).toBe(200);
      const token = ((await res.json()) as { access_token: string }).access_token;
      for (const r of replicas) {
        const got = await fetch(`${r.url}/api/attendance/user?code=nobody`, { headers: { authorization: `Bearer ${token}` } });
        expect(got.status).toBe(200);
        expect(((await got.json()) as { statusCode: string }).statusCode).toBe('USER_NOT_AVAILABLE');
      }
    });

    it('the same events sent to three replicas at once are stored once each, with the same per-item outcomes', async () => {
      const clients = replicas.map((r) => client(r));
      for (let i = 0; i < 20; i++) await clients[0]!.addOrUpdateUser({ employeeCode: `R${i}`, firstName: 'Re', lastName: `Plica ${i}` });
      const events: AttendanceEvent[] = [];
      for (let i = 0; i < 200; i++) {
        const minute = String(i % 60).padStart(2, '0');
        events.push({
          employeeCode: `R${i % 20}`,
          inTime: `2024-07-01 ${String(6 + Math.floor(i / 60)).padStart(2, '0')}:${minute}:00`,
          ...(i % 3 === 0 ? { outTime: `2024-07-01 20:${minute}:00` } : {}),
        });
      }
      events.push({ employeeCode: 'NOBODY', inTime: '2024-07-01 09:00:00' });
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(clients.map((c, i) => c.addEvents(i % 2 ? [...events].reverse() : events)));
        for (const [i, env] of answers.entries()) {
          const codes = env.returnValue!.map((item) => item.statusCode);
          const expected = events.map((e) => (e.employeeCode === 'NOBODY' ? 'USER_NOT_AVAILABLE' : 'SUCCESS'));
          expect(codes).toEqual(i % 2 ? [...expected].reverse() : expected);
        }
      }
      const [counts] = await pgServer.query<{ n: string; d: string; closed: string }>(
        new URL(url).pathname.slice(1),
        "SELECT COUNT(*) AS n, COUNT(DISTINCT (employee_code, in_time)) AS d, COUNT(out_time) AS closed FROM server_events WHERE in_time LIKE '2024-07-01%'",
      );
      expect([Number(counts!.n), Number(counts!.d), Number(counts!.closed)]).toEqual([200, 200, 67]);
    });

    it('the same check-outs (without inTime) sent to two replicas at once close one check-in each, once', async () => {
      const [a, b] = [client(replicas[0]!), client(replicas[2]!)];
      const codes = Array.from({ length: 15 }, (_, i) => `D${i}`);
      for (const code of codes) await a.addOrUpdateUser({ employeeCode: code, firstName: 'Double', lastName: 'Out' });
      await a.addEvents(
        codes.flatMap((code) => [
          { employeeCode: code, inTime: '2024-07-04 08:00:00' },
          { employeeCode: code, inTime: '2024-07-04 12:00:00' },
        ]),
      );
      const outs = codes.map((code) => ({ employeeCode: code, outTime: '2024-07-04 13:00:00' }));
      await Promise.all([a.getToken(), b.getToken()]);
      const [fromA, fromB] = await Promise.all([a.addEvents(outs), b.addEvents(outs)]);
      expect([...fromA.returnValue!, ...fromB.returnValue!].every((i) => i.statusCode === 'SUCCESS')).toBe(true);
      const stored = await a.getEvents({ from: '2024-07-04 00:00:00', to: '2024-07-04 23:59:59' });
      for (const code of codes) {
        const mine = stored
          .returnValue!.filter((e) => e.returnValue!.employeeCode === code)
          .map((e) => [e.returnValue!.inTime, e.returnValue!.outTime]);
        expect(mine).toEqual([
          ['2024-07-04 08:00:00', null],
          ['2024-07-04 12:00:00', '2024-07-04 13:00:00'],
        ]);
      }
    });

    it('check-outs sent to two replicas at once each close their own check-in (no check-out is lost)', async () => {
      const [a, b] = [client(replicas[1]!), client(replicas[2]!)];
      const codes = Array.from({ length: 15 }, (_, i) => `C${i}`);
      for (const code of codes) await a.addOrUpdateUser({ employeeCode: code, firstName: 'Check', lastName: 'Out' });
      await a.addEvents(
        codes.flatMap((code) => [
          { employeeCode: code, inTime: '2024-07-02 08:00:00' },
          { employeeCode: code, inTime: '2024-07-02 12:00:00' },
        ]),
      );
      const [fromA, fromB] = await Promise.all([
        a.addEvents(codes.map((code) => ({ employeeCode: code, outTime: '2024-07-02 13:00:00' }))),
        b.addEvents(codes.map((code) => ({ employeeCode: code, outTime: '2024-07-02 13:05:00' }))),
      ]);
      expect([...fromA.returnValue!, ...fromB.returnValue!].every((i) => i.statusCode === 'SUCCESS')).toBe(true);
      const stored = await a.getEvents({ from: '2024-07-02 00:00:00', to: '2024-07-02 23:59:59' });
      for (const code of codes) {
        const outs = stored.returnValue!.filter((e) => e.returnValue!.employeeCode === code).map((e) => e.returnValue!.outTime);
        expect(outs.sort()).toEqual(['2024-07-02 13:00:00', '2024-07-02 13:05:00']);
      }
    });

    it('keys create, list, revoke and serve take the URL; the password never reaches the output; a revoked key stops on every replica', async () => {
      const withPassword = url.replace('postgres@', 'postgres:s3cret-pw@');
      const made = await runCli(['keys', 'create', '--db', withPassword, '--role', 'admin', '--json']);
      expect(made.code).toBe(0);
      expect(made.stdout + made.stderr).not.toContain('s3cret-pw');
      const pair = JSON.parse(made.stdout) as { apiKey: string; apiSecret: string };
      const child = spawnCli(['serve', '--port', '0', '--db', withPassword], { env: { EDGE_AGENT_LOG_LEVEL: 'info' } });
      let output = '';
      child.stdout!.on('data', (d: Buffer) => (output += d));
      child.stderr!.on('data', (d: Buffer) => (output += d));
      try {
        const [line, base] = await waitForLine(child, /^.*listening on (http:\/\/\S+).*$/, 30_000, 'stdout');
        expect(line).toContain('postgres://postgres:***@');
        const c = new AttendanceClient({ baseUrl: base!, clientId: 'edge-agent', apiKey: pair.apiKey, apiSecret: pair.apiSecret });
        expect((await c.addOrUpdateUser({ employeeCode: 'PW1', firstName: 'Pass', lastName: 'Word' })).statusCode).toBe('SUCCESS');
        expect((await client(replicas[0]!).getUser('PW1')).statusCode).toBe('SUCCESS');
      } finally {
        killTree(child);
      }
      expect(output).toContain('attendance service listening');
      expect(output).not.toContain('s3cret-pw');

      // keys list and revoke take the URL too; a revoked key's tokens stop on every replica.
      const tokenOn = replicas.map((r) => client(r, { apiKey: pair.apiKey, apiSecret: pair.apiSecret }));
      const tokens = await Promise.all(tokenOn.map((c) => c.getToken()));
      const listed = await runCli(['keys', 'list', '--db', withPassword, '--json']);
      expect(listed.code).toBe(0);
      expect(listed.stdout + listed.stderr).not.toContain('s3cret-pw');
      const keys = (JSON.parse(listed.stdout) as { keys: Array<{ apiKey: string; activeTokens: number }> }).keys;
      // The client on the new serve process took one, and one on each replica.
      expect(keys.find((k) => k.apiKey === pair.apiKey)?.activeTokens).toBe(4);
      const revoked = await runCli(['keys', 'revoke', pair.apiKey, '--db', withPassword, '--yes', '--json']);
      expect(revoked.code).toBe(0);
      expect(JSON.parse(revoked.stdout)).toEqual({ revoked: pair.apiKey });
      const missing = await runCli(['keys', 'revoke', pair.apiKey, '--db', withPassword, '--yes']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('CLI_NOT_FOUND');
      expect(missing.stderr).not.toContain('s3cret-pw');
      // Each replica looks at a cached token again within 5 s (DEFAULT_TOKEN_RECHECK_MS).
      const statusOn = (i: number) =>
        fetch(`${replicas[i]!.url}/api/attendance/user?code=x`, { headers: { authorization: `Bearer ${tokens[i]}` } }).then(
          (r) => r.status,
        );
      const deadline = Date.now() + 15_000;
      let statuses = await Promise.all(replicas.map((_, i) => statusOn(i)));
      while (statuses.some((st) => st !== 401) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        statuses = await Promise.all(replicas.map((_, i) => statusOn(i)));
      }
      expect(statuses).toEqual([401, 401, 401]);
    }, 60_000);
  });

  it('the enrolment limit holds across replicas enrolling at once', async () => {
    const url = await pgServer.createDatabase('limit');
    const [one, two] = await Promise.all(
      [0, 1].map(() => startService({ dbPath: url, biometricKey: key, limits: { maxRecordsPerModality: 3 } })),
    );
    try {
      const [c1, c2] = [client(one!), client(two!)];
      const codes = Array.from({ length: 8 }, (_, i) => `B${i}`);
      for (const code of codes) await c1.addOrUpdateUser({ employeeCode: code, firstName: 'Bio', lastName: 'Metric' });
      await Promise.all([c1.getToken(), c2.getToken()]);
      const items = (tag: string) =>
        Array.from({ length: 5 }, (_, i) => ({ modality: 'finger' as const, template: Buffer.from(`${tag}-${i}`).toString('base64') }));
      const answers = await Promise.all(
        codes.flatMap((code) => [c1.updateBiometrics(code, items('one')), c2.updateBiometrics(code, items('two'))]),
      );
      for (const [i, code] of codes.entries()) {
        const enrolled = [...answers[2 * i]!.returnValue!, ...answers[2 * i + 1]!.returnValue!].filter(
          (item) => item.statusCode === 'SUCCESS',
        ).length;
        expect(enrolled, code).toBe(3);
      }
      const rows = await pgServer.query<{ n: string }>(
        new URL(url).pathname.slice(1),
        'SELECT COUNT(*) AS n FROM server_biometrics GROUP BY employee_code',
      );
      expect(rows.map((r) => Number(r.n))).toEqual(codes.map(() => 3));
    } finally {
      await Promise.all([one?.stop(), two?.stop()]);
    }
  });

  it('a revocation on one replica reaches the others within the recheck time', async () => {
    const url = await pgServer.createDatabase('revoke');
    const [one, two] = await Promise.all([0, 1].map(() => startService({ dbPath: url, biometricKey: key, tokenRecheckMs: 300 })));
    try {
      const c = client(two!);
      const token = await c.getToken();
      const get = () => fetch(`${two!.url}/api/attendance/user?code=x`, { headers: { authorization: `Bearer ${token}` } });
      expect((await get()).status).toBe(200);
      await one!.service.revokeTokens();
      await new Promise((r) => setTimeout(r, 400));
      expect((await get()).status).toBe(401);
    } finally {
      await Promise.all([one?.stop(), two?.stop()]);
    }
  });

  it('a replica with another biometric key, or none, refuses to start and says why', async () => {
    const url = await pgServer.createDatabase('keys');
    const first = createAttendanceService({ dbPath: url, biometricKey: key });
    await first.ready();
    await first.close();
    const other = createAttendanceService({ dbPath: url, biometricKey: randomBytes(32) });
    await expect(other.ready()).rejects.toMatchObject({ code: 'SERVER_BIOMETRIC_KEY', message: expect.stringContaining('another key') });
    await other.close();
    const none = await runCli(['serve', '--port', '0', '--db', url], { env: { [keyEnv]: '' } });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('SERVER_BIOMETRIC_KEY');
    expect(none.stderr).toContain(keyEnv);
  });

  it('a database outage is HTTP 503 with Retry-After; the service recovers by itself when it is back', async () => {
    const url = await pgServer.createDatabase('outage');
    const svc = await startService({ dbPath: url, biometricKey: key });
    try {
      const c = client(svc);
      await c.addOrUpdateUser({ employeeCode: 'O1', firstName: 'Out', lastName: 'Age' });
      const token = await c.getToken();
      await pgServer.halt();
      const down = await fetch(`${svc.url}/api/attendance/event`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify([{ employeeCode: 'O1', inTime: '2024-07-03 09:00:00' }]),
      });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      expect(((await down.json()) as { statusCode: string }).statusCode).toBe('ERROR');
      await pgServer.resume();
      const env = await c.addEvents([{ employeeCode: 'O1', inTime: '2024-07-03 09:00:00' }]);
      expect(env.returnValue!.map((i) => i.statusCode)).toEqual(['SUCCESS']);
    } finally {
      await svc.stop();
    }
  });
});
