/**
 * The attendance service's codes (`SERVER_…`): listening, options, its database, sealed biometrics, shifts.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const SERVER_CODES = layerCodes('server', {
  SERVER_ALREADY_LISTENING: { retryable: false, hint: 'close the service before listening again' },
  SERVER_BAD_OPTION: { retryable: false, hint: 'check the option named in the message' },
  SERVER_BAD_ROLE: { retryable: false, hint: 'use admin or admin-audit' },
  SERVER_BIOMETRIC_KEY: {
    retryable: false,
    hint: 'give a 32-byte key or delete the key file to have a new one made (stored biometrics then become unreadable)',
  },
  SERVER_DB_ERROR: {
    retryable: false,
    hint: "the database failed the statement: the service log has the details; check the database server's log",
  },
  SERVER_DB_REFUSED: {
    retryable: false,
    hint: 'the database refused the row (a constraint or a trigger): the service log names it',
  },
  SERVER_DB_UNAVAILABLE: {
    retryable: true,
    hint: 'PostgreSQL cannot be reached, refuses the login or is shutting down: check that it runs, the URL, the password (PGPASSWORD or ~/.pgpass) and max_connections; requests answer 503 until it is back',
  },
  SERVER_DB_URL: { retryable: false, hint: 'give --db a file path (SQLite) or a URL postgres://user@host:5432/database' },
  SERVER_LISTEN: {
    retryable: false,
    hint: 'the port may be taken or not allowed: choose another with --port, or stop the program using it',
  },
  SERVER_SHIFTS_INVALID: {
    retryable: false,
    hint: 'the shifts file holds {defaultShift, shifts: [{name, start: "HH:MM", end: "HH:MM"}]}; fix what is named',
  },
});
