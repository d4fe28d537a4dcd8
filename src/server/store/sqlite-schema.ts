/**
 * The service's tables on SQLite (component `server` of the shared migration table). pg-schema.ts
 * is the same on PostgreSQL.
 *
 * Tested in test/unit/server/store/store.test.ts (the tables the contract runs on, SQLite).
 */
import type { Migration } from '../../core/sqlite.js';

export const SERVER_MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'keys, tokens, users, sealed biometrics, events',
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
        expires_at INTEGER NOT NULL
      );
      CREATE TABLE server_users (
        employee_code TEXT PRIMARY KEY,
        first_name TEXT NOT NULL,
        last_name TEXT NOT NULL,
        email TEXT,
        login_name TEXT UNIQUE,
        password_hash TEXT,
        status TEXT NOT NULL DEFAULT '0',
        group_code TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX server_users_group ON server_users(group_code);
      CREATE TABLE server_biometrics (
        id INTEGER PRIMARY KEY,
        employee_code TEXT NOT NULL REFERENCES server_users(employee_code) ON DELETE CASCADE,
        modality TEXT NOT NULL,
        digest TEXT NOT NULL,
        sealed_image BLOB,
        sealed_template BLOB,
        created_at TEXT NOT NULL,
        UNIQUE (employee_code, modality, digest)
      );
      -- No foreign key to users: deleting a user keeps their attendance history.
      CREATE TABLE server_events (
        id INTEGER PRIMARY KEY,
        employee_code TEXT NOT NULL,
        in_time TEXT NOT NULL,
        out_time TEXT,
        in_utc INTEGER NOT NULL,
        shift TEXT NOT NULL,
        tz_offset INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (employee_code, in_time)
      );
      CREATE INDEX server_events_in ON server_events(in_time);
      CREATE INDEX server_events_open ON server_events(employee_code, out_time, in_utc);
    `,
  },
  {
    version: 2,
    description: 'events remember whether their shift was given (a replay without a shift keeps it)',
    up: 'ALTER TABLE server_events ADD COLUMN shift_given INTEGER NOT NULL DEFAULT 1',
  },
  {
    version: 3,
    description: 'the check value of the biometric key (a service started with another key refuses to start)',
    up: 'CREATE TABLE server_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)',
  },
];
