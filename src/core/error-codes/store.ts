/**
 * Persistence's codes (`STORE_…`): the outbox, the encrypted template cache, the database file. SQLite's own
 * result codes are `SQLITE_…` (../error-codes.ts).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const STORE_CODES = layerCodes('store', {
  STORE_BAD_PUNCH: { retryable: false, hint: 'check the punch named in the message; nothing was recorded' },
  STORE_BAD_TIME: { retryable: false, hint: 'write the time as 2026-03-01 07:58:00' },
  STORE_DATABASE_CORRUPT: {
    retryable: false,
    hint: 'the terminal\'s database is damaged: stop the agent (systemctl stop edge-agent), copy agent.db, agent.db-wal and agent.db-shm aside (pending punches are in them), run "edge-agent doctor" for the full check, then restore the database from backup',
  },
  STORE_NO_SINKS: { retryable: false, hint: 'set upstream to api, mqtt or both' },
  STORE_OUTBOX_FULL: {
    retryable: true,
    hint: 'restore the connection to the upstream ("edge-agent queue status" shows what waits), retry or purge dead letters ("edge-agent queue list --dead"), or raise outbox.maxPending if the disk has room',
  },
  STORE_SCHEMA_TOO_NEW: {
    retryable: false,
    hint: 'a newer edge-agent migrated this database and migrations only go forward: run that version again ("edge-agent rollback" switches back to it), or move the data folder aside to start this version empty',
  },
  STORE_TEMPLATE_CORRUPT: {
    retryable: false,
    hint: 'run "edge-agent doctor"; delete the template and enrol or sync it again',
  },
  STORE_TEMPLATE_INVALID: { retryable: false, hint: 'check the template named in the message; nothing was stored' },
  STORE_TEMPLATE_KEY_INVALID: { retryable: false, hint: 'write templateKey as 64 hex characters (openssl rand -hex 32)' },
  STORE_TEMPLATE_KEY_MISSING: {
    retryable: false,
    hint: 'run "edge-agent provision" (it generates one), or put templateKey (64 hex characters, openssl rand -hex 32) in the 0600 secrets file or the systemd credential "template-key"',
  },
  STORE_TEMPLATE_KEY_WRONG: {
    retryable: false,
    hint: 'restore the templateKey the templates were stored with (secrets file or systemd credential "template-key"); or, to start over, delete the templates and sync them again from the site',
  },
});
