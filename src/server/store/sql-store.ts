/**
 * The statements SQLite and PostgreSQL understand alike, written once with `$1, $2, …`
 * placeholders (the SQLite store turns them into `?1, ?2, …`). Each dialect runs them through its
 * own `rows` and adds what differs: the batch upsert of events, the lookup of a list of codes,
 * locks, savepoints and transactions.
 *
 * Tested in test/unit/server/store/store.test.ts (its statements through both dialects, in the
 * storage contract).
 */
import type { Role } from '../roles.js';
import type {
  ApiKeyInfo,
  Attempt,
  EventRow,
  EventUpsert,
  NewBiometric,
  NewUser,
  ReportRow,
  StoreOps,
  UserRow,
  UserUpdate,
} from './store.js';

export const EVENT_COLUMNS = 'id, employee_code, in_time, out_time, shift, tz_offset';
const USER_COLUMNS = 'employee_code, first_name, last_name, email, login_name, status, group_code';

export abstract class SqlOps implements StoreOps {
  /**
   * Runs one statement and returns its rows. `name` names a statement worth preparing once per
   * connection (PostgreSQL); SQLite prepares every statement once anyway.
   */
  protected abstract rows<T>(name: string | null, text: string, values?: unknown[]): Promise<T[]>;

  abstract upsertEvents(events: readonly EventUpsert[], now: string): Promise<EventRow[]>;
  abstract knownUsers(codes: readonly string[]): Promise<Set<string>>;
  abstract lockEmployees(codes: readonly string[]): Promise<void>;
  abstract attempt<T>(fn: () => Promise<T>): Promise<Attempt<T>>;

  protected async one<T>(name: string | null, text: string, values: unknown[] = []): Promise<T | undefined> {
    return (await this.rows<T>(name, text, values))[0];
  }

  // ---- API keys and tokens ----

  async insertApiKey(apiKey: string, secretHash: string, role: Role, createdAt: string): Promise<void> {
    await this.rows(null, 'INSERT INTO server_api_keys (api_key, secret_hash, role, created_at) VALUES ($1, $2, $3, $4)', [
      apiKey,
      secretHash,
      role,
      createdAt,
    ]);
  }

  async apiKey(apiKey: string): Promise<{ secretHash: string; role: Role } | undefined> {
    const row = await this.one<{ secret_hash: string; role: Role }>(
      'ea_api_key',
      'SELECT secret_hash, role FROM server_api_keys WHERE api_key = $1',
      [apiKey],
    );
    return row && { secretHash: row.secret_hash, role: row.role };
  }

  async insertToken(tokenHash: string, apiKey: string, role: Role, expiresAtMs: number, nowMs: number): Promise<void> {
    await this.rows('ea_token_purge', 'DELETE FROM server_tokens WHERE expires_at < $1', [nowMs]);
    await this.rows('ea_token_insert', 'INSERT INTO server_tokens (token_hash, api_key, role, expires_at) VALUES ($1, $2, $3, $4)', [
      tokenHash,
      apiKey,
      role,
      expiresAtMs,
    ]);
  }

  async token(tokenHash: string): Promise<{ role: Role; expiresAtMs: number } | undefined> {
    const row = await this.one<{ role: Role; expires_at: number }>(
      'ea_token',
      'SELECT role, expires_at FROM server_tokens WHERE token_hash = $1',
      [tokenHash],
    );
    return row && { role: row.role, expiresAtMs: row.expires_at };
  }

  async deleteTokens(): Promise<void> {
    await this.rows(null, 'DELETE FROM server_tokens');
  }

  async apiKeys(nowMs: number): Promise<ApiKeyInfo[]> {
    const rows = await this.rows<{ api_key: string; role: Role; created_at: string; active: number }>(
      null,
      'SELECT k.api_key, k.role, k.created_at, (SELECT COUNT(*) FROM server_tokens t WHERE t.api_key = k.api_key AND t.expires_at > $1) AS active FROM server_api_keys k ORDER BY k.created_at, k.api_key',
      [nowMs],
    );
    return rows.map((r) => ({ apiKey: r.api_key, role: r.role, createdAt: r.created_at, activeTokens: Number(r.active) }));
  }

  async deleteApiKey(apiKey: string): Promise<boolean> {
    await this.rows(null, 'DELETE FROM server_tokens WHERE api_key = $1', [apiKey]);
    return (await this.rows(null, 'DELETE FROM server_api_keys WHERE api_key = $1 RETURNING api_key', [apiKey])).length > 0;
  }

  /** Records `check` as the biometric key's check value unless one is recorded; true when the recorded one is `check`. */
  async sameBiometricKey(check: string): Promise<boolean> {
    await this.rows(null, "INSERT INTO server_meta (name, value) VALUES ('biometric_key_check', $1) ON CONFLICT (name) DO NOTHING", [
      check,
    ]);
    return (await this.one<{ value: string }>(null, "SELECT value FROM server_meta WHERE name = 'biometric_key_check'"))?.value === check;
  }

  // ---- users ----

  user(code: string): Promise<UserRow | undefined> {
    return this.one<UserRow>('ea_user', `SELECT ${USER_COLUMNS} FROM server_users WHERE employee_code = $1`, [code]);
  }

  async userCodeByLogin(loginName: string): Promise<string | undefined> {
    return (await this.one<{ employee_code: string }>(null, 'SELECT employee_code FROM server_users WHERE login_name = $1', [loginName]))
      ?.employee_code;
  }

  async insertUser(u: NewUser, now: string): Promise<void> {
    await this.rows(
      null,
      'INSERT INTO server_users (employee_code, first_name, last_name, email, login_name, password_hash, status, group_code, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)',
      [u.employee_code, u.first_name, u.last_name, u.email, u.login_name, u.password_hash, u.status, u.group_code, now],
    );
  }

  async updateUser(code: string, f: UserUpdate, now: string): Promise<void> {
    await this.rows(
      null,
      'UPDATE server_users SET first_name = $1, last_name = $2, email = $3, status = $4, group_code = $5, updated_at = $6 WHERE employee_code = $7',
      [f.first_name, f.last_name, f.email, f.status, f.group_code, now, code],
    );
  }

  async deleteUser(code: string): Promise<void> {
    await this.rows(null, 'DELETE FROM server_biometrics WHERE employee_code = $1', [code]);
    await this.rows(null, 'DELETE FROM server_users WHERE employee_code = $1', [code]);
  }

  async employeeKnown(code: string): Promise<boolean> {
    const row = await this.one<{ known: unknown }>(
      'ea_employee_known',
      'SELECT (EXISTS (SELECT 1 FROM server_users WHERE employee_code = $1) OR EXISTS (SELECT 1 FROM server_events WHERE employee_code = $1)) AS known',
      [code],
    );
    return Boolean(row?.known);
  }

  // ---- biometrics ----

  async hasBiometric(code: string, modality: string, digest: string): Promise<boolean> {
    return (
      (await this.one(null, 'SELECT 1 AS x FROM server_biometrics WHERE employee_code = $1 AND modality = $2 AND digest = $3', [
        code,
        modality,
        digest,
      ])) !== undefined
    );
  }

  async countBiometrics(code: string, modality: string): Promise<number> {
    return (
      (
        await this.one<{ n: number }>(null, 'SELECT COUNT(*) AS n FROM server_biometrics WHERE employee_code = $1 AND modality = $2', [
          code,
          modality,
        ])
      )?.n ?? 0
    );
  }

  async insertBiometric(r: NewBiometric): Promise<void> {
    await this.rows(
      null,
      'INSERT INTO server_biometrics (employee_code, modality, digest, sealed_image, sealed_template, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [r.employeeCode, r.modality, r.digest, r.sealedImage, r.sealedTemplate, r.createdAt],
    );
  }

  async deleteBiometrics(code: string): Promise<number> {
    return (await this.rows(null, 'DELETE FROM server_biometrics WHERE employee_code = $1 RETURNING id', [code])).length;
  }

  // ---- events ----

  eventClosedAt(code: string, outTime: string): Promise<EventRow | undefined> {
    return this.one<EventRow>(
      'ea_event_closed_at',
      `SELECT ${EVENT_COLUMNS} FROM server_events WHERE employee_code = $1 AND out_time = $2 ORDER BY in_utc DESC LIMIT 1`,
      [code, outTime],
    );
  }

  async latestOpenEvent(code: string, outUtc: number): Promise<number | undefined> {
    const row = await this.one<{ id: number }>(
      'ea_latest_open',
      'SELECT id FROM server_events WHERE employee_code = $1 AND out_time IS NULL AND in_utc <= $2 ORDER BY in_utc DESC LIMIT 1',
      [code, outUtc],
    );
    return row?.id;
  }

  closeEvent(id: number, outTime: string, now: string): Promise<EventRow | undefined> {
    return this.one<EventRow>(
      'ea_close_event',
      `UPDATE server_events SET out_time = $1, updated_at = $2 WHERE id = $3 AND out_time IS NULL RETURNING ${EVENT_COLUMNS}`,
      [outTime, now, id],
    );
  }

  eventAt(code: string, inTime: string): Promise<EventRow | undefined> {
    return this.one<EventRow>(null, `SELECT ${EVENT_COLUMNS} FROM server_events WHERE employee_code = $1 AND in_time = $2`, [code, inTime]);
  }

  async deleteEvent(id: number): Promise<void> {
    await this.rows(null, 'DELETE FROM server_events WHERE id = $1', [id]);
  }

  events(r: { code: string | null; from: string; to: string; limit: number }): Promise<EventRow[]> {
    if (r.code !== null) {
      return this.rows<EventRow>(
        null,
        `SELECT ${EVENT_COLUMNS} FROM server_events WHERE employee_code = $1 AND in_time BETWEEN $2 AND $3 ORDER BY in_time, id LIMIT $4`,
        [r.code, r.from, r.to, r.limit],
      );
    }
    return this.rows<EventRow>(
      null,
      `SELECT ${EVENT_COLUMNS} FROM server_events WHERE in_time BETWEEN $1 AND $2 ORDER BY in_time, employee_code, id LIMIT $3`,
      [r.from, r.to, r.limit],
    );
  }

  reportRows(from: string, to: string): Promise<ReportRow[]> {
    return this.rows<ReportRow>(
      null,
      `SELECT e.employee_code, e.in_time, e.out_time, e.shift, e.tz_offset, u.first_name, u.last_name, u.group_code
         FROM server_events e JOIN server_users u ON u.employee_code = e.employee_code
        WHERE e.in_time BETWEEN $1 AND $2
        ORDER BY e.employee_code, e.in_time`,
      [from, to],
    );
  }
}
