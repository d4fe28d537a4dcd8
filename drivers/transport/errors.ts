/**
 * The transport layer's errors, shared by every transport so drivers see one set of codes.
 *
 * Tested in test/unit/drivers/transport/memory-transport.test.ts and
 * test/unit/drivers/transport/serial-transport.test.ts (TRANSPORT_DISCONNECTED for writes after a
 * disconnect, through transport.contract.ts).
 */
import { AgentError } from '../../src/core/errors.js';

export function disconnectedError(path: string, detail?: string, cause?: unknown): AgentError {
  return new AgentError(
    'TRANSPORT_DISCONNECTED',
    `device ${path} went away${detail ? ` (${detail})` : ''}`,
    { path },
    { hint: 'check the cable and the module power; the agent reconnects by itself when the device is back', retryable: true, cause },
  );
}

export function closedError(path: string): AgentError {
  return new AgentError('TRANSPORT_CLOSED', `transport ${path} is closed`, { path }, { hint: 'open the transport before using it' });
}
