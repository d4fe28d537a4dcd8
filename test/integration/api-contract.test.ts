/**
 * Contract tests: the real AttendanceClient against the real service over HTTP on loopback, on
 * each database the service runs on (a real SQLite file; a real PostgreSQL server where it is
 * installed). Every operation, every status code of section 7 (top level and per item), both path
 * forms, token expiry and refresh, the audit role's refusal, and what a database failure gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient, type AttendanceClientOptions } from '../../src/api/client.js';
import type { AttendanceEvent, Envelope } from '../../src/api/types.js';
import { WORK_HOUR_DURATIONS } from '../../src/api/types.js';
import { AgentError } from '../../src/core/errors.js';
import { SERVICE_DATABASES, type ServiceDatabase } from '../helpers/databases.js';
import { startService, type InProcessService, type StartServiceOptions } from '../helpers/service.js';

const SHIFTS = {
  defaultShift: 'GENERAL',
  shifts: [
    { name: 'GENERAL', start: '09:00', end: '17:00', breakMinutes: 60 },
    { name: 'NIGHT', start: '22:00', end: '06:00', breakMinutes: 30 },
  ],
};
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]).toString('base64');
const TEMPLATE_BYTES = Buffer.from('FMR\0 minutiae-template-0123456789');

const makeClient = (s: InProcessService, extra: Partial<AttendanceClientOptions> = {}) =>
  new AttendanceClient({ baseUrl: s.url, clientId: s.clientId, apiKey: s.apiKey, apiSecret: s.apiSecret, timeoutMs: 5000, ...extra });

async function failure(p: Promise<unknown>): Promise<AgentError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  }
  throw new Error('expected a failure');
}

const codes = (env: Envelope<Envelope<unknown>[]>) => env.returnValue!.map((i) => i.statusCode);

function contractSuite(database: ServiceDatabase): void {
  let svc: InProcessService;
  let admin: AttendanceClient;
  let audit: AttendanceClient;
  const start = async (options: StartServiceOptions = {}) => startService({ ...(await database.serviceOptions()), ...options });

  beforeAll(async () => {
    await database.start();
    svc = await start({ shifts: SHIFTS, limits: { maxRecordsPerModality: 2 } });
    admin = makeClient(svc);
    audit = makeClient(svc, { apiKey: svc.auditKey, apiSecret: svc.auditSecret });
  });
  afterAll(async () => {
    await svc?.stop();
    await database.stop();
  });

  describe('users (operations 1-3)', () => {
    it('adds a user and returns it with the password as given; status as a bare number is read', async () => {
      const env = await admin.addOrUpdateUser({
        employeeCode: 'U1',
        firstName: 'Ann',
        lastName: 'Lee',
        email: 'ann@example.com',
        loginName: 'ann',
        password: 'pw-1',
        status: 0,
        groupCode: 'G1',
      });
      expect(env.statusCode).toBe('SUCCESS');
      expect(env.returnValue).toEqual({
        employeeCode: 'U1',
        firstName: 'Ann',
        lastName: 'Lee',
        email: 'ann@example.com',
        loginName: 'ann',
        password: 'pw-1',
        status: '0',
        groupCode: 'G1',
      });
    });

    it('updates by employeeCode without changing loginName or password', async () => {
      const env = await admin.addOrUpdateUser({
        employeeCode: 'U1',
        firstName: 'Anna',
        lastName: 'Lee',
        loginName: 'other',
        password: 'pw-2',
        status: '1',
      });
      expect(env.statusCode).toBe('SUCCESS');
      expect(env.returnValue).toMatchObject({ firstName: 'Anna', loginName: 'ann', status: '1', email: 'ann@example.com' });
      expect(env.returnValue!.password).toBeUndefined();
      const [row] = await database.query<{ password_hash: string }>(
        svc.dbPath,
        'SELECT password_hash FROM server_users WHERE employee_code = $1',
        ['U1'],
      );
      expect(row!.password_hash).toMatch(/^scrypt\$/);
      expect(row!.password_hash).not.toContain('pw-1');
    });

    it('gets a user (never with a password) or USER_NOT_AVAILABLE', async () => {
      const env = await admin.getUser('U1');
      expect(env.statusCode).toBe('SUCCESS');
      expect(env.returnValue).toMatchObject({ employeeCode: 'U1', firstName: 'Anna' });
      expect(env.returnValue!.password).toBeUndefined();
      expect((await admin.getUser('nobody')).statusCode).toBe('USER_NOT_AVAILABLE');
    });

    it.each([
      [{ employeeCode: 'U2', firstName: '', lastName: 'X' }, 'FIRST_NAME_EMPTY'],
      [{ employeeCode: 'U2', firstName: 'X', lastName: '  ' }, 'Last_NAME_EMPTY'],
      [{ employeeCode: 'U2', firstName: 'X', lastName: 'Y', email: 'not-an-email' }, 'INVALID_EMAIL'],
      [{ employeeCode: 'has space', firstName: 'X', lastName: 'Y' }, 'INVALID_EMPCODE'],
      [{ employeeCode: '', firstName: 'X', lastName: 'Y' }, 'INVALID_EMPCODE'],
      [{ employeeCode: 'U2', firstName: 'X', lastName: 'Y', loginName: 'ann' }, 'INVALID_EMPCODE'],
    ])('add %j → %s, nothing written', async (user, code) => {
      const env = await admin.addOrUpdateUser(user);
      expect(env.statusCode).toBe(code);
      expect(env.returnValue).toBeNull();
      expect(env.statusDescription).toBeTruthy();
      expect((await admin.getUser('U2')).statusCode).toBe('USER_NOT_AVAILABLE');
    });

    it('applies the shared employee-code rule: refuses a lone surrogate, . and .., bidi and zero-width characters; stores and finds codes in NFC', async () => {
      for (const employeeCode of ['\ud800', 'E\udc001', '.', '..', 'E\u202e1', 'E\u200b1', 'x'.repeat(65)]) {
        const env = await admin.addOrUpdateUser({ employeeCode, firstName: 'X', lastName: 'Y' });
        expect(env.statusCode, JSON.stringify(employeeCode)).toBe('INVALID_EMPCODE');
        expect(env.statusDescription).toMatch(/an employee code is 1 to 64 characters/);
      }
      const events = await admin.addEvents([{ employeeCode: 'E\u2066X', inTime: '2024-02-01 09:00:00' }]);
      expect(codes(events)).toEqual(['INVALID_PARAMETERS']);
      // Added decomposed, found composed (by path and by query) and the other way round.
      expect(
        (await admin.addOrUpdateUser({ employeeCode: 'Jose\u0301', firstName: 'Jos\u00e9', lastName: 'N' })).returnValue,
      ).toMatchObject({ employeeCode: 'Jos\u00e9' });
      expect((await admin.getUser('Jos\u00e9')).statusCode).toBe('SUCCESS');
      expect((await admin.getUser('Jose\u0301')).statusCode).toBe('SUCCESS');
      expect(codes(await admin.addEvents([{ employeeCode: 'Jose\u0301', inTime: '2024-02-01 09:00:00' }]))).toEqual(['SUCCESS']);
      expect((await admin.deleteUser('Jose\u0301')).statusCode).toBe('SUCCESS');
    });

    it('refuses a full-width or other compatibility form of a code on every write, naming the plain form; E1001 stays one person', async () => {
      expect((await admin.addOrUpdateUser({ employeeCode: 'E1001', firstName: 'Plain', lastName: 'One' })).statusCode).toBe('SUCCESS');
      const add = await admin.addOrUpdateUser({ employeeCode: 'Ｅ１００１', firstName: 'Wide', lastName: 'Twin' });
      expect(add.statusCode).toBe('INVALID_EMPCODE');
      expect(add.statusDescription).toMatch(/U\+FF25, a compatibility form of "E".*write it as "E1001"/);
      expect((await admin.addOrUpdateUser({ employeeCode: 'ﬁ-1', firstName: 'X', lastName: 'Y' })).statusCode).toBe('INVALID_EMPCODE');
      const events = await admin.addEvents([
        { employeeCode: 'Ｅ１００１', inTime: '2024-02-02 09:00:00' },
        { employeeCode: 'E1001', inTime: '2024-02-02 09:00:00' },
      ]);
      expect(codes(events)).toEqual(['INVALID_PARAMETERS', 'SUCCESS']);
      expect(events.returnValue?.[0]?.statusDescription).toMatch(/write it as "E1001"/);
      const bio = await admin.updateBiometrics('Ｅ１００１', [{ modality: 'finger', template: TEMPLATE_BYTES.toString('base64') }]);
      expect(bio.statusCode).toBe('INVALID_PARAMETERS');
      expect(bio.statusDescription).toMatch(/write it as "E1001"/);
      // Nothing of the look-alike was stored: one E1001, and the full-width code finds nobody.
      expect((await admin.getUser('Ｅ１００１')).statusCode).toBe('USER_NOT_AVAILABLE');
      const day = await admin.getEvents({ from: '2024-02-02 00:00:00', to: '2024-02-02 23:59:59' });
      expect(day.returnValue?.map((e) => e.returnValue?.employeeCode)).toEqual(['E1001']);
      expect((await admin.deleteUser('E1001')).statusCode).toBe('SUCCESS');
    });

    it('deletes a user and their biometrics, keeps their events', async () => {
      await admin.addOrUpdateUser({ employeeCode: 'GONE', firstName: 'G', lastName: 'One' });
      await admin.updateBiometrics('GONE', [{ modality: 'finger', template: TEMPLATE_BYTES.toString('base64') }]);
      await admin.addEvents([{ employeeCode: 'GONE', inTime: '2024-02-01 09:00:00', outTime: '2024-02-01 17:00:00' }]);
      const del = await admin.deleteUser('GONE');
      expect(del.statusCode).toBe('SUCCESS');
      expect(del.returnValue).toMatchObject({ employeeCode: 'GONE', firstName: 'G' });
      expect((await admin.deleteUser('GONE')).statusCode).toBe('USER_NOT_AVAILABLE');
      const events = await admin.getEvents({ code: 'GONE', from: '2024-02-01 00:00:00', to: '2024-02-01 23:59:59' });
      expect(events.statusCode).toBe('SUCCESS');
      expect(events.returnValue).toHaveLength(1);
      const [bio] = await database.query<{ n: number | string }>(
        svc.dbPath,
        'SELECT COUNT(*) AS n FROM server_biometrics WHERE employee_code = $1',
        ['GONE'],
      );
      expect(Number(bio!.n)).toBe(0);
    });
  });

  describe('biometrics (operations 4-5)', () => {
    beforeAll(async () => {
      await admin.addOrUpdateUser({ employeeCode: 'B1', firstName: 'Bio', lastName: 'Metric' });
    });

    it('gives each item its own status', async () => {
      const env = await admin.updateBiometrics('B1', [
        { modality: 'finger', template: TEMPLATE_BYTES.toString('base64') },
        { modality: 'palm', template: 'AAEC' },
        { modality: 'face' },
        { modality: 'iris', image: Buffer.from('plain text, not an image').toString('base64') },
        { modality: 'face', image: PNG, template: null },
        { modality: 'finger', template: 'not base64!' },
      ]);
      expect(env.statusCode).toBe('SUCCESS');
      expect(codes(env)).toEqual([
        'SUCCESS',
        'BIOMETRIC_TYPE_NOT_SUPPORTED',
        'INVALID_PARAMETERS',
        'FAILED_TO_EXTRACT',
        'SUCCESS',
        'INVALID_PARAMETERS',
      ]);
      for (const item of env.returnValue!) expect(item.returnValue).toBeNull();
    });

    it('stores sealed records (no plaintext in the file), once per identical record, and ENROLLMENT_ERROR past the limit', async () => {
      const again = await admin.updateBiometrics('B1', [{ modality: 'finger', template: TEMPLATE_BYTES.toString('base64') }]);
      expect(codes(again)).toEqual(['SUCCESS']);
      const more = await admin.updateBiometrics('B1', [
        { modality: 'finger', template: Buffer.from('second finger').toString('base64') },
        { modality: 'finger', template: Buffer.from('third finger').toString('base64') },
      ]);
      expect(codes(more)).toEqual(['SUCCESS', 'ENROLLMENT_ERROR']);
      const rows = await database.query<{ sealed_template: Buffer | null }>(
        svc.dbPath,
        "SELECT sealed_template FROM server_biometrics WHERE employee_code = 'B1' AND modality = 'finger'",
      );
      expect(rows).toHaveLength(2);
      for (const r of rows) expect(r.sealed_template!.includes(Buffer.from('minutiae-template'))).toBe(false);
    });

    it('top level: USER_NOT_AVAILABLE for an unknown user, INVALID_PARAMETERS for an empty list', async () => {
      const unknown = await admin.updateBiometrics('nobody', [{ modality: 'finger', template: 'AAEC' }]);
      expect(unknown).toMatchObject({ statusCode: 'USER_NOT_AVAILABLE', returnValue: null });
      expect((await admin.updateBiometrics('B1', [])).statusCode).toBe('INVALID_PARAMETERS');
    });

    it('deletes all records of a user; USER_NOT_AVAILABLE for an unknown one', async () => {
      const del = await admin.deleteBiometrics('B1');
      expect(del).toMatchObject({ statusCode: 'SUCCESS', returnValue: null });
      expect(del.statusDescription).toContain('3 biometric records deleted');
      expect((await admin.deleteBiometrics('nobody')).statusCode).toBe('USER_NOT_AVAILABLE');
    });
  });

  describe('events (operations 6-8)', () => {
    beforeAll(async () => {
      await admin.addOrUpdateUser({ employeeCode: 'E1', firstName: 'Eve', lastName: 'One', groupCode: 'G1' });
      await admin.addOrUpdateUser({ employeeCode: 'E2', firstName: 'Ed', lastName: 'Two', groupCode: 'G2' });
    });

    it('processes a mixed batch item by item', async () => {
      const env = await admin.addEvents([
        { employeeCode: 'E1', inTime: '2024-03-04 08:45:00' },
        { employeeCode: 'NOBODY', inTime: '2024-03-04 08:00:00' },
        { employeeCode: 'E1', inTime: '2024-03-0408:00:00' },
        { employeeCode: 'E1' },
        { employeeCode: 'E1', inTime: '2024-03-04 10:00:00', shift: 'NO-SUCH-SHIFT' },
        { employeeCode: 'E1', inTime: '2024-03-04 10:00:00', outTime: '2024-03-04 09:00:00' },
        { employeeCode: 'E2', outTime: '2024-03-04 17:00:00' },
        { employeeCode: 'E1', outTime: '2024-03-04 12:30:00' },
      ]);
      expect(env.statusCode).toBe('SUCCESS');
      expect(codes(env)).toEqual([
        'SUCCESS',
        'USER_NOT_AVAILABLE',
        'INVALID_PARAMETERS',
        'INVALID_PARAMETERS',
        'INVALID_PARAMETERS',
        'INVALID_PARAMETERS',
        'INVALID_PARAMETERS',
        'SUCCESS',
      ]);
      expect(env.returnValue![0]!.returnValue).toEqual({
        employeeCode: 'E1',
        inTime: '2024-03-04 08:45:00',
        outTime: null,
        shift: 'GENERAL',
        tzOffset: 0,
      });
      expect(env.returnValue![6]!.statusDescription).toContain('matching event cannot be found');
      // the out-only event closed the open check-in
      expect(env.returnValue![7]!.returnValue).toEqual({
        employeeCode: 'E1',
        inTime: '2024-03-04 08:45:00',
        outTime: '2024-03-04 12:30:00',
        shift: 'GENERAL',
        tzOffset: 0,
      });
    });

    it('replays create no second event; a replayed out-only event of a closed one succeeds', async () => {
      const batch: AttendanceEvent[] = [
        { employeeCode: 'E1', inTime: '2024-03-04 13:15:00', outTime: '2024-03-04 18:00:00' },
        { employeeCode: 'E1', outTime: '2024-03-04 12:30:00' },
      ];
      for (let i = 0; i < 2; i++) expect(codes(await admin.addEvents(batch))).toEqual(['SUCCESS', 'SUCCESS']);
      const got = await admin.getEvents({ code: 'E1', from: '2024-03-04 00:00:00', to: '2024-03-04 23:59:59' });
      expect(got.returnValue!.map((e) => [e.returnValue!.inTime, e.returnValue!.outTime])).toEqual([
        ['2024-03-04 08:45:00', '2024-03-04 12:30:00'],
        ['2024-03-04 13:15:00', '2024-03-04 18:00:00'],
      ]);
    });

    it('a run of check-ins is stored at once; duplicates within a batch and replays keep one event each; a replay without a shift keeps it', async () => {
      const run: AttendanceEvent[] = Array.from({ length: 50 }, (_, i) => ({
        employeeCode: i % 2 ? 'E1' : 'E2',
        inTime: `2024-03-20 ${String(6 + Math.floor(i / 4)).padStart(2, '0')}:${String((i % 4) * 15).padStart(2, '0')}:00`,
        shift: 'NIGHT',
      }));
      expect(codes(await admin.addEvents(run)).every((c) => c === 'SUCCESS')).toBe(true);
      // replay without shift, with a duplicate inside the batch that also closes the first event
      const replay = await admin.addEvents([
        ...run.map((e) => ({ ...e, shift: null })),
        { employeeCode: 'E2', inTime: run[0]!.inTime!, outTime: '2024-03-20 23:00:00' },
      ]);
      expect(codes(replay).every((c) => c === 'SUCCESS')).toBe(true);
      expect(replay.returnValue![0]!.returnValue!.shift).toBe('NIGHT');
      const got = await admin.getEvents({ from: '2024-03-20 00:00:00', to: '2024-03-20 23:59:59' });
      expect(got.returnValue).toHaveLength(50);
      expect(got.returnValue!.every((e) => e.returnValue!.shift === 'NIGHT')).toBe(true);
      expect(
        got.returnValue!.filter((e) => e.returnValue!.outTime !== null).map((e) => [e.returnValue!.employeeCode, e.returnValue!.inTime]),
      ).toEqual([['E2', run[0]!.inTime]]);
      // an explicit shift does change it
      const changed = await admin.addEvents([
        { employeeCode: 'E1', inTime: run[1]!.inTime!, shift: 'GENERAL' },
        { employeeCode: 'E1', inTime: run[3]!.inTime!, shift: 'GENERAL' },
      ]);
      expect(changed.returnValue!.map((i) => i.returnValue!.shift)).toEqual(['GENERAL', 'GENERAL']);
      const cleanup = await admin.deleteEvents(
        'E1',
        got
          .returnValue!.filter((e) => e.returnValue!.employeeCode === 'E1')
          .map((e) => ({ employeeCode: 'E1', inTime: e.returnValue!.inTime! })),
      );
      expect(codes(cleanup).every((c) => c === 'SUCCESS')).toBe(true);
      await admin.deleteEvents(
        'E2',
        got
          .returnValue!.filter((e) => e.returnValue!.employeeCode === 'E2')
          .map((e) => ({ employeeCode: 'E2', inTime: e.returnValue!.inTime! })),
      );
      expect((await admin.getEvents({ from: '2024-03-20 00:00:00', to: '2024-03-20 23:59:59' })).returnValue).toHaveLength(0);
    });

    it('an out-only event closes the latest open check-in, not an older one', async () => {
      await admin.addEvents([
        { employeeCode: 'E2', inTime: '2024-03-05 21:50:00', shift: 'NIGHT' },
        { employeeCode: 'E2', inTime: '2024-03-05 08:00:00', shift: 'GENERAL' },
      ]);
      const closed = await admin.addEvents([{ employeeCode: 'E2', outTime: '2024-03-06 06:10:00' }]);
      expect(closed.returnValue![0]!.returnValue).toMatchObject({
        inTime: '2024-03-05 21:50:00',
        outTime: '2024-03-06 06:10:00',
        shift: 'NIGHT',
      });
      const morning = await admin.getEvents({ code: 'E2', from: '2024-03-05 08:00:00', to: '2024-03-05 08:00:00' });
      expect(morning.returnValue![0]!.returnValue!.outTime).toBeNull();
    });

    it('get events: INVALID_TIME_FORMAT, USER_NOT_AVAILABLE, and all employees without code', async () => {
      expect((await admin.getEvents({ from: '2024-03-04', to: '2024-03-05 00:00:00' })).statusCode).toBe('INVALID_TIME_FORMAT');
      expect((await admin.getEvents({ from: '2024-03-04 00:00:00', to: '2024-03-31 25:00:00' })).statusCode).toBe('INVALID_TIME_FORMAT');
      expect((await admin.getEvents({ code: 'NOBODY', from: '2024-03-04 00:00:00', to: '2024-03-05 00:00:00' })).statusCode).toBe(
        'USER_NOT_AVAILABLE',
      );
      const all = await admin.getEvents({ from: '2024-03-04 00:00:00', to: '2024-03-05 23:59:59' });
      expect(all.statusCode).toBe('SUCCESS');
      expect(new Set(all.returnValue!.map((e) => e.returnValue!.employeeCode))).toEqual(new Set(['E1', 'E2']));
      expect(all.returnValue!.every((e) => e.statusCode === 'SUCCESS')).toBe(true);
    });

    it('deletes events per item; unknown employee at the top level', async () => {
      await admin.addEvents([{ employeeCode: 'E2', inTime: '2024-03-07 09:00:00', outTime: '2024-03-07 17:00:00' }]);
      const env = await admin.deleteEvents('E2', [
        { employeeCode: 'E2', inTime: '2024-03-07 09:00:00' },
        { employeeCode: 'E2', inTime: '2024-03-07 09:00:00' },
        { employeeCode: 'E1', inTime: '2024-03-04 08:45:00' },
        { employeeCode: 'E2', inTime: 'bad' },
      ]);
      expect(env.statusCode).toBe('SUCCESS');
      expect(codes(env)).toEqual(['SUCCESS', 'INVALID_PARAMETERS', 'INVALID_PARAMETERS', 'INVALID_PARAMETERS']);
      expect(env.returnValue![0]!.returnValue).toMatchObject({ inTime: '2024-03-07 09:00:00', outTime: '2024-03-07 17:00:00' });
      expect((await admin.deleteEvents('NOBODY', [{ employeeCode: 'NOBODY', inTime: '2024-03-07 09:00:00' }])).statusCode).toBe(
        'USER_NOT_AVAILABLE',
      );
      expect((await admin.deleteEvents('E2', [])).statusCode).toBe('INVALID_PARAMETERS');
    });
  });

  describe('work-hour report (operation 9)', () => {
    it('computes worked example A of docs/integrator.md with every field of 2.5', async () => {
      const env = await admin.workHourReport({ from: '2024-03-04 00:00:00', to: '2024-03-04 23:59:59', groupcodes: ['G1'] });
      expect(env.statusCode).toBe('SUCCESS');
      expect(env.returnValue).toHaveLength(1);
      const row = env.returnValue![0]!;
      expect(row).toMatchObject({
        employeeCode: 'E1',
        firstName: 'Eve',
        lastName: 'One',
        shiftHours: 480,
        shiftWorkHours: 420,
        workHours: 510,
        inOuttime: 555,
        productiveHours: 435,
        productiveWorkHours: 420,
        overtime: 90,
        earlyArrival: 15,
        lateArrival: 0,
        earlyDepature: 0,
        lateDepature: 60,
        totalUnProductiveHours: 75,
        actualBreakHours: 45,
        firstCheckin: '2024-03-04 08:45:00',
        lastCheckout: '2024-03-04 18:00:00',
        tzOffset: 0,
      });
      expect(row.customdata).toMatchObject({ groupCode: 'G1', groupType: 'DAILY', periodStart: '2024-03-04', shifts: ['GENERAL'] });
    });

    it('filters by shiftname and groups WEEKLY and MONTHLY by summing days', async () => {
      const night = await admin.workHourReport({ from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', shiftname: 'NIGHT' });
      expect(night.returnValue!.map((r) => [r.employeeCode, r.workHours, r.shiftWorkHours, r.overtime])).toEqual([['E2', 500, 450, 50]]);
      const weekly = await admin.workHourReport({
        from: '2024-03-01 00:00:00',
        to: '2024-03-31 23:59:59',
        grouptype: 'WEEKLY',
        groupcodes: ['G2'],
      });
      // E2 in the week of 2024-03-04, all on 2024-03-05: a NIGHT shift (500 worked) and an open GENERAL check-in (0 worked), each against its own shift
      expect(weekly.returnValue).toHaveLength(1);
      expect(weekly.returnValue![0]).toMatchObject({
        employeeCode: 'E2',
        workHours: 500,
        shiftHours: 960,
        firstCheckin: '2024-03-05 08:00:00',
        lastCheckout: '2024-03-06 06:10:00',
      });
      expect(weekly.returnValue![0]!.customdata).toMatchObject({
        periodStart: '2024-03-04',
        periodEnd: '2024-03-10',
        days: 1,
        shifts: ['GENERAL', 'NIGHT'],
      });
      const monthly = await admin.workHourReport({ from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', grouptype: 'MONTHLY' });
      expect(monthly.returnValue!.map((r) => r.employeeCode)).toEqual(['E1', 'E2']);
      expect(monthly.returnValue![0]!.customdata).toMatchObject({ periodStart: '2024-03-01', periodEnd: '2024-03-31' });
    });

    it('pages rows (default size 100, max 1000) and refuses bad parameters with INVALID_PARAMETERS', async () => {
      const p1 = await admin.workHourReport({ from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', pagesize: 1, pagenumber: 2 });
      expect(p1.returnValue!.map((r) => r.employeeCode)).toEqual(['E2']);
      expect(p1.statusDescription).toMatch(/page 2 of \d+/);
      for (const bad of [
        { from: '2024-03-01', to: '2024-03-31 23:59:59' },
        { from: '2024-03-31 00:00:00', to: '2024-03-01 00:00:00' },
        { from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', grouptype: 'YEARLY' as 'DAILY' },
        { from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', pagesize: 1001 },
        { from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', pagenumber: 0 },
        { from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59', shiftname: 'NOPE' },
      ]) {
        const env = await admin.workHourReport(bad);
        expect(env.statusCode, JSON.stringify(bad)).toBe('INVALID_PARAMETERS');
        expect(env.returnValue).toBeNull();
      }
    });

    it('rows carry every field of 2.5 as numbers', async () => {
      const env = await admin.workHourReport({ from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59' });
      for (const row of env.returnValue!) for (const d of WORK_HOUR_DURATIONS) expect(Number.isInteger(row[d])).toBe(true);
    });
  });

  describe('the /attendance/api path form', () => {
    it('serves every operation but the report', async () => {
      const c = makeClient(svc, { pathForm: 'attendance' });
      expect((await c.addOrUpdateUser({ employeeCode: 'P1', firstName: 'Path', lastName: 'Form' })).statusCode).toBe('SUCCESS');
      expect((await c.getUser('P1')).statusCode).toBe('SUCCESS');
      expect(codes(await c.updateBiometrics('P1', [{ modality: 'iris', template: 'AAECAwQF' }]))).toEqual(['SUCCESS']);
      expect((await c.deleteBiometrics('P1')).statusCode).toBe('SUCCESS');
      expect(codes(await c.addEvents([{ employeeCode: 'P1', inTime: '2024-04-01 09:00:00' }]))).toEqual(['SUCCESS']);
      expect((await c.getEvents({ code: 'P1', from: '2024-04-01 00:00:00', to: '2024-04-01 23:59:59' })).returnValue).toHaveLength(1);
      expect(codes(await c.deleteEvents('P1', [{ employeeCode: 'P1', inTime: '2024-04-01 09:00:00' }]))).toEqual(['SUCCESS']);
      expect((await c.deleteUser('P1')).statusCode).toBe('SUCCESS');
      expect((await failure(c.workHourReport({ from: '2024-04-01 00:00:00', to: '2024-04-01 23:59:59' }))).code).toBe('API_NOT_SUPPORTED');
    });
  });

  describe('roles and tokens', () => {
    it('the audit key reads everything and is refused every write with 403', async () => {
      expect((await audit.getUser('E1')).statusCode).toBe('SUCCESS');
      expect((await audit.getEvents({ from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59' })).statusCode).toBe('SUCCESS');
      expect((await audit.workHourReport({ from: '2024-03-01 00:00:00', to: '2024-03-31 23:59:59' })).statusCode).toBe('SUCCESS');
      const writes: Array<() => Promise<unknown>> = [
        () => audit.addOrUpdateUser({ employeeCode: 'AUD', firstName: 'A', lastName: 'B' }),
        () => audit.deleteUser('E1'),
        () => audit.updateBiometrics('E1', [{ modality: 'finger', template: 'AAEC' }]),
        () => audit.deleteBiometrics('E1'),
        () => audit.addEvents([{ employeeCode: 'E1', inTime: '2024-03-09 09:00:00' }]),
        () => audit.deleteEvents('E1', [{ employeeCode: 'E1', inTime: '2024-03-04 08:45:00' }]),
      ];
      for (const w of writes) {
        const err = await failure(w());
        expect(err.code).toBe('API_FORBIDDEN');
        expect(err.context).toMatchObject({ status: 403, statusCode: 'FORBIDDEN' });
        expect(String(err.context.statusDescription)).toContain('admin-audit');
      }
      expect((await admin.getUser('AUD')).statusCode).toBe('USER_NOT_AVAILABLE');
      expect((await admin.getUser('E1')).statusCode).toBe('SUCCESS');
    });

    it('refuses a wrong secret or client id with API_AUTH_FAILED', async () => {
      expect((await failure(makeClient(svc, { apiSecret: 'wrong' }).getUser('E1'))).code).toBe('API_AUTH_FAILED');
      expect((await failure(makeClient(svc, { clientId: 'someone-else' }).getUser('E1'))).code).toBe('API_AUTH_FAILED');
    });

    it('gets a new token after a 401 (tokens revoked on the service)', async () => {
      const c = makeClient(svc);
      await c.getUser('E1');
      expect(c.tokensObtained).toBe(1);
      await svc.service.revokeTokens();
      expect((await c.getUser('E1')).statusCode).toBe('SUCCESS');
      expect(c.tokensObtained).toBe(2);
    });

    it('refreshes an expiring token (short lifetime) and the service refuses an expired one', async () => {
      const short = await start({ tokenTtlSec: 2 });
      try {
        const c = makeClient(short, { refreshMarginSec: 0 });
        await c.addOrUpdateUser({ employeeCode: 'T1', firstName: 'T', lastName: 'Tl' });
        const stale = await c.getToken();
        const before = c.tokensObtained;
        await new Promise((r) => setTimeout(r, 2200));
        const raw = await fetch(`${short.url}/api/attendance/user?code=T1`, { headers: { authorization: `Bearer ${stale}` } });
        expect(raw.status).toBe(401);
        expect(((await raw.json()) as { statusDescription: string }).statusDescription).toContain('expired');
        expect((await c.getUser('T1')).statusCode).toBe('SUCCESS');
        expect(c.tokensObtained).toBe(before + 1);
      } finally {
        await short.stop();
      }
    });
  });

  describe('tzOffset in hours (service and client configured alike)', () => {
    it('stores minutes, speaks hours', async () => {
      const h = await start({ tzOffsetUnit: 'hours' });
      try {
        const c = makeClient(h, { tzOffsetUnit: 'hours' });
        await c.addOrUpdateUser({ employeeCode: 'H1', firstName: 'H', lastName: 'Ours' });
        const env = await c.addEvents([{ employeeCode: 'H1', inTime: '2024-05-01 09:00:00', tzOffset: 330 }]);
        expect(env.returnValue![0]!.returnValue!.tzOffset).toBe(330);
        const raw = await fetch(`${h.url}/api/attendance/event?code=H1&from=2024-05-01%2000:00:00&to=2024-05-01%2023:59:59`, {
          headers: { authorization: `Bearer ${await c.getToken()}` },
        });
        const body = (await raw.json()) as { returnValue: Array<{ returnValue: { tzOffset: number } }> };
        expect(body.returnValue[0]!.returnValue.tzOffset).toBe(5.5);
        const [row] = await database.query<{ tz_offset: number }>(
          h.dbPath,
          "SELECT tz_offset FROM server_events WHERE employee_code = 'H1'",
        );
        expect(row!.tz_offset).toBe(330);
      } finally {
        await h.stop();
      }
    });
  });

  describe('system errors: ERROR, and no item half written', () => {
    it("a database refusal of one event is that item's ERROR; the others are stored; a failing user write is HTTP 500 ERROR", async () => {
      const s = await start();
      try {
        const c = makeClient(s);
        await c.addOrUpdateUser({ employeeCode: 'OK1', firstName: 'O', lastName: 'K' });
        await c.addOrUpdateUser({ employeeCode: 'BOOM', firstName: 'B', lastName: 'Oom' });
        // A second connection to the same database installs triggers that make it refuse.
        await database.refuse(s.dbPath, 'server_events', 'INSERT', 'BOOM');
        await database.refuse(s.dbPath, 'server_users', 'UPDATE', 'BOOM');
        const env = await c.addEvents([
          { employeeCode: 'OK1', inTime: '2024-08-01 09:00:00' },
          { employeeCode: 'BOOM', inTime: '2024-08-01 09:00:00' },
          { employeeCode: 'OK1', outTime: '2024-08-01 17:00:00' },
        ]);
        expect(codes(env)).toEqual(['SUCCESS', 'ERROR', 'SUCCESS']);
        const stored = await c.getEvents({ from: '2024-08-01 00:00:00', to: '2024-08-01 23:59:59' });
        expect(stored.returnValue!.map((e) => [e.returnValue!.employeeCode, e.returnValue!.outTime])).toEqual([
          ['OK1', '2024-08-01 17:00:00'],
        ]);
        const err = await failure(c.addOrUpdateUser({ employeeCode: 'BOOM', firstName: 'B', lastName: 'Changed' }));
        expect(err.code).toBe('API_HTTP_5XX');
        expect(err.context).toMatchObject({ status: 500, statusCode: 'ERROR' });
        expect((await c.getUser('BOOM')).returnValue!.lastName).toBe('Oom');
      } finally {
        await s.stop();
      }
    });
  });

  describe('a long run of check-ins with refusals in it', () => {
    it('only the refused items are ERROR, wherever they are in the run; every other item is stored once', async () => {
      const s = await start();
      try {
        const c = makeClient(s);
        const codesOf = Array.from({ length: 41 }, (_, i) => `RUN${i}`);
        for (const code of codesOf) await c.addOrUpdateUser({ employeeCode: code, firstName: 'R', lastName: code });
        // The service stores a refused run again in halves: refusals first, last and side by side.
        const refused = ['RUN0', 'RUN17', 'RUN18', 'RUN40'];
        for (const code of refused) await database.refuse(s.dbPath, 'server_events', 'INSERT', code);
        const env = await c.addEvents(codesOf.map((code) => ({ employeeCode: code, inTime: '2024-08-02 08:00:00' })));
        expect(codes(env)).toEqual(codesOf.map((code) => (refused.includes(code) ? 'ERROR' : 'SUCCESS')));
        const stored = await c.getEvents({ from: '2024-08-02 00:00:00', to: '2024-08-02 23:59:59' });
        expect(stored.returnValue!.map((e) => e.returnValue!.employeeCode).sort()).toEqual(
          codesOf.filter((code) => !refused.includes(code)).sort(),
        );
      } finally {
        await s.stop();
      }
    });
  });

  describe('ERROR from every operation when the database fails', () => {
    it('answers HTTP 500 ERROR for each of the nine operations, keeps running, and recovers', async () => {
      const s = await start();
      try {
        const c = makeClient(s);
        await c.addOrUpdateUser({ employeeCode: 'X1', firstName: 'X', lastName: 'One' });
        const tables = ['server_users', 'server_events', 'server_biometrics'];
        await database.renameTables(s.dbPath, tables);
        const range = { from: '2024-09-01 00:00:00', to: '2024-09-30 23:59:59' };
        const operations: Array<[string, () => Promise<unknown>]> = [
          ['addOrUpdateUser', () => c.addOrUpdateUser({ employeeCode: 'X2', firstName: 'X', lastName: 'Two' })],
          ['deleteUser', () => c.deleteUser('X1')],
          ['getUser', () => c.getUser('X1')],
          ['updateBiometrics', () => c.updateBiometrics('X1', [{ modality: 'finger', template: 'AAEC' }])],
          ['deleteBiometrics', () => c.deleteBiometrics('X1')],
          ['addEvents', () => c.addEvents([{ employeeCode: 'X1', inTime: '2024-09-02 09:00:00' }])],
          ['deleteEvents', () => c.deleteEvents('X1', [{ employeeCode: 'X1', inTime: '2024-09-02 09:00:00' }])],
          ['getEvents', () => c.getEvents({ code: 'X1', ...range })],
          ['workHourReport', () => c.workHourReport(range)],
        ];
        for (const [name, op] of operations) {
          const err = await failure(op());
          expect(err.code, name).toBe('API_HTTP_5XX');
          expect(err.context, name).toMatchObject({ status: 500, statusCode: 'ERROR', operation: name });
        }
        await database.renameTables(s.dbPath, tables, true);
        expect((await c.getUser('X1')).statusCode).toBe('SUCCESS');
        expect(codes(await c.addEvents([{ employeeCode: 'X1', inTime: '2024-09-02 09:00:00' }]))).toEqual(['SUCCESS']);
        expect((await c.workHourReport(range)).returnValue).toHaveLength(1);
      } finally {
        await s.stop();
      }
    });
  });
}

for (const database of SERVICE_DATABASES) {
  describe.skipIf(!database.available)(`the attendance API on ${database.label}`, () => contractSuite(database));
}
