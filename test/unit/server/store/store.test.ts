/**
 * The contract of the service's storage interface (src/server/store/store.ts), written once and
 * run against every implementation: SQLite, and PostgreSQL where it is installed. Two stores on
 * the same database stand for two replicas (two connections, or two pools).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import { openServiceStore } from '../../../../src/server/store/open.js';
import type { EventUpsert, ServiceStore } from '../../../../src/server/store/store.js';
import { SERVICE_DATABASES, type ServiceDatabase } from '../../../helpers/databases.js';

const NOW = '2024-05-01T12:00:00.000Z';

function checkIn(code: string, inTime: string, extra: Partial<EventUpsert> = {}): EventUpsert {
  return {
    employeeCode: code,
    inTime,
    outTime: null,
    inUtc: Date.parse(`${inTime.replace(' ', 'T')}Z`),
    shift: 'GENERAL',
    shiftGiven: false,
    tzMinutes: 0,
    ...extra,
  };
}

async function addUser(store: ServiceStore, code: string): Promise<void> {
  await store.transaction((tx) =>
    tx.insertUser(
      {
        employee_code: code,
        first_name: 'F',
        last_name: 'L',
        email: null,
        login_name: null,
        password_hash: null,
        status: '0',
        group_code: null,
      },
      NOW,
    ),
  );
}

function storeContract(database: ServiceDatabase): void {
  const opened: ServiceStore[] = [];
  let url: string;
  let store: ServiceStore;
  /** Another replica on the same database. */
  const replica = async () => {
    const s = await openServiceStore(url);
    opened.push(s);
    return s;
  };

  beforeAll(() => database.start());
  afterAll(() => database.stop());
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  const fresh = async () => {
    url = await database.fresh();
    store = await replica();
  };

  it('applies its migrations once, also when opened again', async () => {
    await fresh();
    const again = await replica();
    expect(await again.knownUsers([])).toEqual(new Set());
    const rows = await database.query<{ v: number | string }>(
      url,
      "SELECT MAX(version) AS v FROM schema_migrations WHERE component = 'server'",
    );
    expect(Number(rows[0]!.v)).toBeGreaterThanOrEqual(1);
  });

  it('refuses a database a newer release migrated past what this one knows, before reading or writing', async () => {
    await fresh();
    await database.query(
      url,
      "INSERT INTO schema_migrations (component, version, description, applied_at) VALUES ('server', 999, 'from the future', $1)",
      [NOW],
    );
    await expect(openServiceStore(url)).rejects.toMatchObject({
      code: 'STORE_SCHEMA_TOO_NEW',
      message: expect.stringContaining('version 999'),
    });
  });

  it('upserts check-ins by identity: a replay keeps the check-out and a named shift, many at once', async () => {
    await fresh();
    const [first] = await store.transaction((tx) =>
      tx.upsertEvents([checkIn('E1', '2024-05-01 09:00:00', { outTime: '2024-05-01 17:00:00', shift: 'NIGHT', shiftGiven: true })], NOW),
    );
    expect(first).toMatchObject({
      employee_code: 'E1',
      in_time: '2024-05-01 09:00:00',
      out_time: '2024-05-01 17:00:00',
      shift: 'NIGHT',
      tz_offset: 0,
    });
    const rows = await store.transaction((tx) =>
      tx.upsertEvents(
        [
          checkIn('E1', '2024-05-01 09:00:00'),
          checkIn('E2', '2024-05-01 08:00:00', { tzMinutes: 120 }),
          checkIn('E1', '2024-05-02 09:00:00'),
        ],
        NOW,
      ),
    );
    expect(rows).toHaveLength(3);
    const replayed = rows.find((r) => r.employee_code === 'E1' && r.in_time === '2024-05-01 09:00:00')!;
    expect(replayed).toMatchObject({ out_time: '2024-05-01 17:00:00', shift: 'NIGHT', id: first!.id });
    expect(rows.find((r) => r.employee_code === 'E2')!.tz_offset).toBe(120);
    expect(await store.events({ code: null, from: '2024-05-01 00:00:00', to: '2024-05-02 23:59:59', limit: 10 })).toHaveLength(3);
  });

  it('finds the latest open check-in, closes it only while it is open, and finds it by its check-out', async () => {
    await fresh();
    await store.transaction((tx) =>
      tx.upsertEvents(
        [checkIn('E1', '2024-05-01 08:00:00'), checkIn('E1', '2024-05-01 12:00:00'), checkIn('E1', '2024-05-01 18:00:00')],
        NOW,
      ),
    );
    const open = await store.latestOpenEvent('E1', Date.parse('2024-05-01T13:00:00Z'));
    const closed = await store.transaction((tx) => tx.closeEvent(open!, '2024-05-01 13:00:00', NOW));
    expect(closed).toMatchObject({ in_time: '2024-05-01 12:00:00', out_time: '2024-05-01 13:00:00' });
    expect(await store.transaction((tx) => tx.closeEvent(open!, '2024-05-01 14:00:00', NOW))).toBeUndefined();
    expect((await store.eventClosedAt('E1', '2024-05-01 13:00:00'))?.in_time).toBe('2024-05-01 12:00:00');
    const next = await store.latestOpenEvent('E1', Date.parse('2024-05-01T13:00:00Z'));
    expect((await store.eventAt('E1', '2024-05-01 08:00:00'))?.id).toBe(next);
  });

  it("users, biometrics and who is known (a deleted user's events keep them known)", async () => {
    await fresh();
    await addUser(store, 'U1');
    await store.transaction((tx) => tx.upsertEvents([checkIn('U1', '2024-05-01 09:00:00')], NOW));
    await store.transaction((tx) =>
      tx.insertBiometric({
        employeeCode: 'U1',
        modality: 'finger',
        digest: 'd1',
        sealedImage: null,
        sealedTemplate: Buffer.from([1, 2, 3]),
        createdAt: NOW,
      }),
    );
    expect(await store.hasBiometric('U1', 'finger', 'd1')).toBe(true);
    expect(await store.countBiometrics('U1', 'finger')).toBe(1);
    expect(await store.knownUsers(['U1', 'U2'])).toEqual(new Set(['U1']));
    await store.transaction((tx) => tx.deleteUser('U1'));
    expect(await store.user('U1')).toBeUndefined();
    expect(await store.countBiometrics('U1', 'finger')).toBe(0);
    expect(await store.employeeKnown('U1')).toBe(true);
    expect(await store.employeeKnown('U2')).toBe(false);
  });

  it('tokens: stored with their role, expired ones purged when a new one is stored, all deleted at once', async () => {
    await fresh();
    await store.transaction((tx) => tx.insertApiKey('ak_1', 'hash', 'admin', NOW));
    await store.transaction((tx) => tx.insertToken('t-old', 'ak_1', 'admin', 1000, 500));
    await store.transaction((tx) => tx.insertToken('t-new', 'ak_1', 'admin', 10_000, 2000));
    expect(await store.token('t-old')).toBeUndefined();
    expect(await store.token('t-new')).toEqual({ role: 'admin', expiresAtMs: 10_000 });
    await store.transaction((tx) => tx.deleteTokens());
    expect(await store.token('t-new')).toBeUndefined();
  });

  it('lists keys by creation with their unexpired tokens as numbers; deleting a key takes its tokens, and a second delete says there was none', async () => {
    await fresh();
    await store.transaction(async (tx) => {
      await tx.insertApiKey('ak_b', 'hash-b', 'admin-audit', '2024-05-01T10:00:00.000Z');
      await tx.insertApiKey('ak_a', 'hash-a', 'admin', '2024-05-01T11:00:00.000Z');
      await tx.insertToken('t-a1', 'ak_a', 'admin', 10_000, 0);
      await tx.insertToken('t-a2', 'ak_a', 'admin', 10_000, 0);
      await tx.insertToken('t-a3', 'ak_a', 'admin', 3_000, 0);
    });
    expect(await store.apiKeys(5_000)).toEqual([
      { apiKey: 'ak_b', role: 'admin-audit', createdAt: '2024-05-01T10:00:00.000Z', activeTokens: 0 },
      { apiKey: 'ak_a', role: 'admin', createdAt: '2024-05-01T11:00:00.000Z', activeTokens: 2 },
    ]);
    expect(await store.transaction((tx) => tx.deleteApiKey('ak_a'))).toBe(true);
    expect(await store.token('t-a1')).toBeUndefined();
    expect(await store.apiKey('ak_a')).toBeUndefined();
    expect(await store.transaction((tx) => tx.deleteApiKey('ak_a'))).toBe(false);
    expect((await store.apiKeys(5_000)).map((k) => k.apiKey)).toEqual(['ak_b']);
  });

  it('records the biometric key check once; another key is told apart', async () => {
    await fresh();
    expect(await store.sameBiometricKey('check-a')).toBe(true);
    expect(await (await replica()).sameBiometricKey('check-a')).toBe(true);
    expect(await store.sameBiometricKey('check-b')).toBe(false);
  });

  it('a transaction that throws leaves nothing behind', async () => {
    await fresh();
    await expect(
      store.transaction(async (tx) => {
        await tx.upsertEvents([checkIn('E1', '2024-05-01 09:00:00')], NOW);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await store.eventAt('E1', '2024-05-01 09:00:00')).toBeUndefined();
  });

  it('attempt: a refusal undoes only its own work; the transaction goes on and commits the rest', async () => {
    await fresh();
    await database.refuse(url, 'server_events', 'INSERT', 'BOOM');
    const outcomes = await store.transaction(async (tx) => {
      const a = await tx.attempt(() => tx.upsertEvents([checkIn('OK', '2024-05-01 09:00:00')], NOW));
      const b = await tx.attempt(() =>
        tx.upsertEvents([checkIn('OK', '2024-05-01 10:00:00'), checkIn('BOOM', '2024-05-01 09:00:00')], NOW),
      );
      const c = await tx.attempt(() => tx.upsertEvents([checkIn('OK', '2024-05-01 11:00:00')], NOW));
      return [a, b, c].map((r) => ('value' in r ? 'stored' : 'refused'));
    });
    expect(outcomes).toEqual(['stored', 'refused', 'stored']);
    const rows = await store.events({ code: null, from: '2024-05-01 00:00:00', to: '2024-05-01 23:59:59', limit: 10 });
    expect(rows.map((r) => `${r.employee_code} ${r.in_time}`)).toEqual(['OK 2024-05-01 09:00:00', 'OK 2024-05-01 11:00:00']);
  });

  it('a failure that is not a refusal is thrown as an AgentError, and nothing is written', async () => {
    await fresh();
    await database.renameTables(url, ['server_users']);
    const err = await store.transaction((tx) => tx.user('X')).catch((e: unknown) => e);
    expect(isAgentError(err)).toBe(true);
    await database.renameTables(url, ['server_users'], true);
    expect(await store.user('X')).toBeUndefined();
  });

  it('two replicas storing the same events at once leave one row per identity', async () => {
    await fresh();
    const other = await replica();
    const batch = Array.from({ length: 40 }, (_, i) =>
      checkIn(`E${i % 7}`, `2024-05-01 ${String(6 + Math.floor(i / 7)).padStart(2, '0')}:00:00`),
    );
    for (let round = 0; round < 5; round++) {
      const reversed = [...batch].reverse();
      const [a, b] = await Promise.all([
        store.transaction((tx) => tx.upsertEvents(batch, NOW)),
        other.transaction((tx) => tx.upsertEvents(reversed, NOW)),
      ]);
      expect(a).toHaveLength(40);
      expect(b).toHaveLength(40);
    }
    const rows = await database.query<{ n: number | string; d: number | string }>(
      url,
      'SELECT COUNT(*) AS n, COUNT(DISTINCT employee_code || in_time) AS d FROM server_events',
    );
    expect([Number(rows[0]!.n), Number(rows[0]!.d)]).toEqual([40, 40]);
  });

  it('two replicas adding the same user at once: one adds, the other sees it (no error)', async () => {
    await fresh();
    const other = await replica();
    const add = (s: ServiceStore) =>
      s.transaction(async (tx) => {
        if (await tx.user('SAME')) return 'updated';
        await new Promise((r) => setTimeout(r, 50)); // both look before either writes
        await tx.insertUser(
          {
            employee_code: 'SAME',
            first_name: 'F',
            last_name: 'L',
            email: null,
            login_name: null,
            password_hash: null,
            status: '0',
            group_code: null,
          },
          NOW,
        );
        return 'added';
      });
    const outcomes = await Promise.all([add(store), add(other)]);
    expect(outcomes.sort()).toEqual(['added', 'updated']);
    expect(await store.knownUsers(['SAME'])).toEqual(new Set(['SAME']));
  });

  it('lockEmployees: a second replica waits for the first transaction holding the employee, then sees its writes', async () => {
    await fresh();
    const other = await replica();
    await store.transaction((tx) => tx.upsertEvents([checkIn('L1', '2024-05-01 08:00:00')], NOW));
    const order: string[] = [];
    let firstHasLock!: () => void;
    const locked = new Promise<void>((r) => (firstHasLock = r));
    const first = store.transaction(async (tx) => {
      await tx.lockEmployees(['L1', 'L0']);
      firstHasLock();
      await new Promise((r) => setTimeout(r, 300));
      const id = await tx.latestOpenEvent('L1', Date.parse('2024-05-01T12:00:00Z'));
      await tx.closeEvent(id!, '2024-05-01 12:00:00', NOW);
      order.push('first closed');
    });
    await locked;
    const second = other.transaction(async (tx) => {
      await tx.lockEmployees(['L1']);
      order.push('second locked');
      return tx.latestOpenEvent('L1', Date.parse('2024-05-01T13:00:00Z'));
    });
    const [, open] = await Promise.all([first, second]);
    expect(order).toEqual(['first closed', 'second locked']);
    expect(open).toBeUndefined();
  });
}

for (const database of SERVICE_DATABASES) {
  describe.skipIf(!database.available)(`the service store on ${database.label}`, () => storeContract(database));
}
