/**
 * Delivery's codes: the outbox's uploader (`UPLOAD_…`) and its MQTT sink (`MQTT_…`).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const UPLOAD_CODES = layerCodes('upload', {
  MQTT_UNAVAILABLE: {
    retryable: true,
    hint: 'check mqtt.url and that the broker runs; punches wait in the outbox and go when it is back',
  },
  MQTT_PUBLISH_FAILED: {
    retryable: true,
    hint: 'the broker did not take the message: check the connection and the broker log (message_size_limit, ACLs)',
  },
  MQTT_PUBLISH_INVALID: {
    retryable: false,
    hint: 'nothing was sent: the topic or the payload is over what MQTT (or mqtt.maxPayloadBytes) allows',
  },
  UPLOAD_DEAD_LETTER: {
    retryable: false,
    hint: 'look at it with "edge-agent queue list --dead", fix the cause in the service, then "edge-agent queue retry"',
  },
  UPLOAD_FAILED: {
    retryable: false,
    hint: 'delivery failed unexpectedly: punches stay in the outbox and are tried again',
  },
  UPLOAD_SINK_BROKEN: {
    retryable: true,
    hint: 'a delivery target failed in an unexpected way: read the message and the logs, then restart the agent',
  },
});
