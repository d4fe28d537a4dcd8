/**
 * The service's tables on PostgreSQL (component `server` of `schema_migrations`): the same tables,
 * columns and keys as on SQLite (sqlite-schema.ts), in PostgreSQL's types. Text that is compared
 * or ordered (employee codes, date-times) uses the "C" collation, so ranges and orders are
 * byte-wise exactly as on SQLite whatever the database's locale.
 *
 * Version 1 is the whole schema of SQLite version 3; later changes are added to both lists.
 *
 * Tested in test/unit/server/store/store.test.ts (the tables the contract runs on, PostgreSQL).
 */
export interface PgMigration {
  version: number;
  description: string;
  /** One or more statements, run as one simple query inside the migration's transaction. */
  up: string;
}

export const PG_SERVER_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    description: 'keys, tokens, users, sealed biometrics, events, the biometric key check',
    up: `
      CREATE TABLE server_api_keys (
        api_key TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('admin', 'admin-audit')),
        created_at TEXT NOT NULL
      );
      CREATE TABLE server_tokens (
        token_hash TEXT PRIMARY KEY,
        api_key TEXT NOT NULL REFERENCES server_api_keys(api_key) ON DELETE CASCADE,
        role TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX server_tokens_expiry ON server_tokens(expires_at);
      CREATE TABLE server_users (
        employee_code TEXT COLLATE "C" PRIMARY KEY,
        first_name TEXT NOT NULL,
        last_name TEXT NOT NULL,
        email TEXT,
        login_name TEXT COLLATE "C" UNIQUE,
        password_hash TEXT,
        status TEXT NOT NULL DEFAULT '0',
        group_code TEXT COLLATE "C",
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX server_users_group ON server_users(group_code);
      CREATE TABLE server_biometrics (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        employee_code TEXT COLLATE "C" NOT NULL REFERENCES server_users(employee_code) ON DELETE CASCADE,
        modality TEXT NOT NULL,
        digest TEXT NOT NULL,
        sealed_image BYTEA,
        sealed_template BYTEA,
        created_at TEXT NOT NULL,
        UNIQUE (employee_code, modality, digest)
      );
      -- No foreign key to users: deleting a user keeps their attendance history.
      CREATE TABLE server_events (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        employee_code TEXT COLLATE "C" NOT NULL,
        in_time TEXT COLLATE "C" NOT NULL,
        out_time TEXT COLLATE "C",
        in_utc BIGINT NOT NULL,
        shift TEXT NOT NULL,
        shift_given BOOLEAN NOT NULL DEFAULT TRUE,
        tz_offset INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (employee_code, in_time)
      );
      CREATE INDEX server_events_in ON server_events(in_time);
      CREATE INDEX server_events_open ON server_events(employee_code, out_time, in_utc);
      CREATE TABLE server_meta (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
];
