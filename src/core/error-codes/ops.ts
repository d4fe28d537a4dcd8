/**
 * Ops' codes (`OPS_…`): the MQTT connection, signed commands and their answers (site sync's `OPS_SYNC_…` are in site-sync.ts).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const OPS_CODES = layerCodes('ops', {
  OPS_BAD_ARGUMENT: { retryable: false, hint: 'omit "ids" to retry every dead letter' },
  OPS_BAD_REQUEST: { retryable: false, hint: 'send a JSON object such as {"transaction": "abc-1"}' },
  OPS_COMMAND_FAILED: { retryable: false, hint: 'the command failed on the terminal: read the message in the answer' },
  OPS_MQTT_CLOSED: { retryable: false, hint: 'check mqtt.url, the credentials and that the broker runs' },
  OPS_MQTT_CONNECT: { retryable: true, hint: 'check the broker URL, credentials and that the broker runs' },
  OPS_MQTT_TIMEOUT: { retryable: true, hint: 'check mqtt.url and that the broker runs and is reachable from this terminal' },
  OPS_NO_KEY: {
    retryable: false,
    hint: 'put opsKey (or opsKeys.<id>) in the secrets file (edge-agent provision --ops-key-file or --generate-ops-key), or pass --key-file',
  },
  OPS_REPLAY_UNRECORDED: {
    retryable: true,
    hint: "the terminal's database could not record the command against replays, so it did not run it: check its disk (edge-agent doctor), then send the command again with a new transaction id",
  },
  OPS_UNAUTHENTICATED: {
    retryable: false,
    hint: 'sign the command with an ops key the terminal holds: edge-agent ops send (docs/operator.md, Authenticated commands)',
  },
  OPS_UNKNOWN_COMMAND: { retryable: false, hint: 'send one of the commands listed in the answer' },
});
