/**
 * Site sync's codes (`OPS_SYNC_…`): keys, sealed records refused or tampered with, a record that
 * could not be applied, sync not started or off.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const SITE_SYNC_CODES = layerCodes('site-sync', {
  OPS_SYNC_FAILED: {
    retryable: false,
    hint: "applying a site record failed: check the terminal's disk and logs; the record is applied again on the next sync",
  },
  OPS_SYNC_MALFORMED: {
    retryable: false,
    hint: 'a site record did not decrypt or parse: check that every terminal of the site has the same site key',
  },
  OPS_SYNC_NOT_STARTED: {
    retryable: false,
    hint: 'site sync is not running: it needs mqtt.url, a template key and a site key',
  },
  OPS_SYNC_NO_KEY: { retryable: false, hint: 'set siteKey in the secrets file (64 hex characters)' },
  OPS_SYNC_OFF: { retryable: false, hint: 'it needs mqtt.url, a template key and a site key' },
  OPS_SYNC_REFUSED: {
    retryable: false,
    hint: 'the record is not newer than what this terminal holds (a replay or a stale copy): nothing changed; publish a new enrolment or deletion to change it',
  },
  OPS_SYNC_TAMPERED: {
    retryable: false,
    hint: 'the message was altered or moved to another topic; re-enrol or republish from the origin terminal',
  },
  OPS_SYNC_WRONG_KEY: {
    retryable: false,
    hint: 'give every terminal of the site the same site key (edge-agent provision --site-key-file)',
  },
});
