/**
 * The attendance API contract's codes (`API_…`): the client's network, authentication and answers, employee codes, date-times.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const API_CODES = layerCodes('api', {
  API_AUTH_FAILED: {
    retryable: false,
    hint: 'check api.clientId in the config and the API key and secret (edge-agent keys create makes a new pair on our service)',
  },
  API_BAD_RESPONSE: {
    retryable: true,
    hint: 'api.url may point at something that is not the attendance service; check the URL and the service logs',
  },
  API_EMPLOYEE_CODE_INVALID: {
    retryable: false,
    hint: 'an employee code is 1 to 64 characters, no spaces, control, bidi or zero-width characters, none of / \\ ? # %, not "." or ".."',
  },
  API_FORBIDDEN: { retryable: false, hint: 'use a key with the admin role; admin-audit keys may only read' },
  API_HTTP_4XX: { retryable: false, hint: 'the request does not fit this service: check api.url and api.pathForm' },
  API_HTTP_5XX: { retryable: true, hint: 'a server-side problem: the service logs say more' },
  API_INVALID_DATE_TIME: { retryable: false, hint: 'write date-times as yyyy-MM-dd HH:mm:ss, e.g. 2024-03-05 08:30:00' },
  API_NETWORK: {
    retryable: true,
    hint: 'check api.url in the config, that the service runs, and the network',
  },
  API_NOT_SUPPORTED: { retryable: false, hint: 'set api.pathForm to "api" to use the report' },
  API_RATE_LIMITED: { retryable: true, hint: 'the service asks to slow down: wait as long as it says (Retry-After), then try again' },
  API_TIMEOUT: {
    retryable: true,
    hint: 'the service or the network is slow or down (api.timeoutMs sets the limit)',
  },
  API_UNAUTHORIZED: {
    retryable: false,
    hint: 'check that the API key still exists on the service and that api.clientId is right',
  },
});
