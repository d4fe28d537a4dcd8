/**
 * Configuration's codes: the config file (`CONFIG_…`) and the secrets file (`SECRETS_…`).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const CONFIG_CODES = layerCodes('config', {
  CONFIG_BAD_ENUM: { retryable: false, hint: 'use one of the values the message lists' },
  CONFIG_BAD_TIMEZONE: { retryable: false, hint: 'set terminal.timeZone to an IANA name such as Europe/Berlin or UTC' },
  CONFIG_BAD_URL: { retryable: false, hint: 'write a full URL such as http://10.0.0.5:8080 or mqtt://broker:1883' },
  CONFIG_INVALID: { retryable: false, hint: 'write it as 04:00' },
  CONFIG_MISSING: {
    retryable: false,
    hint: 'run "edge-agent provision" or add the missing setting to the config or the secrets file',
  },
  CONFIG_NONE: { retryable: false, hint: 'pass --config FILE or set EDGE_AGENT_CONFIG, or run "edge-agent provision"' },
  CONFIG_NOT_FOUND: {
    retryable: false,
    hint: 'check the path given to --config or $EDGE_AGENT_CONFIG, or run "edge-agent provision"',
  },
  CONFIG_SYNTAX: { retryable: false, hint: 'fix the YAML or JSON at the position named' },
  CONFIG_TLS_UNREADABLE: {
    retryable: false,
    hint: 'check the mqtt.tls paths in the config and that the agent user may read the files',
  },
  CONFIG_UNKNOWN_KEY: {
    retryable: false,
    hint: 'remove the key or fix its spelling (the message suggests the nearest known key)',
  },
  CONFIG_WRONG_TYPE: { retryable: false, hint: 'give the key a value of the type the message names' },
  SECRETS_BAD_KEY: {
    retryable: false,
    hint: 'write the key as 64 hex characters (openssl rand -hex 32), or let "edge-agent provision" generate it',
  },
  SECRETS_EMPTY: { retryable: false, hint: 'write the secret into the file named' },
  SECRETS_PERMISSIONS: { retryable: false, hint: 'make the secrets file readable by the agent user only: chmod 600 FILE' },
  SECRETS_SYNTAX: { retryable: false, hint: 'fix the file or write it again with "edge-agent provision"' },
  SECRETS_UNKNOWN_KEY: { retryable: false, hint: 'remove the key, or check its spelling against the known keys' },
  SECRETS_UNREADABLE: { retryable: false, hint: 'check the path and that the agent user may read the file' },
});
