/**
 * The shared kernel's codes (`CORE_…`, and `INTERNAL` for a bug): cancellation, timeouts, the HTTP body reader.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const CORE_CODES = layerCodes('core', {
  CORE_ABORTED: { retryable: false, hint: 'the operation was cancelled because the agent is stopping; nothing to do' },
  CORE_HTTP_BODY_ABORTED: {
    retryable: true,
    hint: 'the client closed the connection before sending its whole body: send the request again',
  },
  CORE_HTTP_BODY_NOT_JSON: { retryable: false, hint: 'send the body as one JSON value (Content-Type: application/json)' },
  CORE_HTTP_BODY_TIMEOUT: { retryable: true, hint: 'send the whole body at once, then wait for the answer' },
  CORE_HTTP_BODY_TOO_LARGE: { retryable: false, hint: 'send a smaller body: the message names the limit' },
  CORE_HTTP_BODY_TYPE: { retryable: false, hint: 'send the body with the Content-Type the message names' },
  CORE_TIMEOUT: { retryable: true, hint: 'the other side did not answer in time; check that it runs, then try again' },
  INTERNAL: { retryable: false, hint: 'this is a bug in edge-agent: report it with the log lines around it' },
});
