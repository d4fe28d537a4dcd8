/**
 * The CLI's codes (`CLI_…`): usage, files, confirmation, what a command was told to find.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const CLI_CODES = layerCodes('cli', {
  CLI_CONFIRM_NEEDED: { retryable: false, hint: 'add --yes to confirm' },
  CLI_DB_MISSING: { retryable: false, hint: 'check the path, or add --create to make a new database there' },
  CLI_NOT_FOUND: { retryable: false, hint: 'check the id or code (list them first)' },
  CLI_FILE_UNREADABLE: { retryable: false, hint: 'check the path and the permissions' },
  CLI_FILE_UNWRITABLE: { retryable: false, hint: 'check the directory exists, is writable and has free space' },
  CLI_IMPORT_BAD_LINE: {
    retryable: false,
    hint: 'each line is one JSON object: {"code":"1042","direction":"in","at":"2026-03-01 07:58:00"}',
  },
  CLI_IMPORT_UNREADABLE: { retryable: false, hint: 'check the path' },
  CLI_PAIRS_SYNTAX: { retryable: false, hint: 'write "A<TAB>B" on each line' },
  CLI_SERVICE_REFUSED: { retryable: false, hint: 'read the status code the service answered; its logs say more' },
  CLI_USAGE: { retryable: false, hint: 'run "edge-agent help <command>" for the options' },
});
