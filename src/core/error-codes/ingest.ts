/**
 * The central ingest's codes (`INGEST_…`): its broker connection, its metrics port.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const INGEST_CODES = layerCodes('ingest', {
  INGEST_MQTT_CONNECT: {
    retryable: true,
    hint: 'check --mqtt, the MQTT credentials and that the broker runs and is reachable from here',
  },
  INGEST_METRICS_LISTEN: {
    retryable: false,
    hint: 'another program uses the metrics port: choose another with --metrics-port (0 picks a free one)',
  },
  INGEST_NO_SHARED_SUBSCRIPTIONS: {
    retryable: false,
    hint: 'use a broker with shared subscriptions (Mosquitto 2, EMQX, HiveMQ, VerneMQ), or run a single ingest with --no-share',
  },
});
