/**
 * GT-521 errors. Every NACK code becomes its own AgentError code (`DRIVER_GT521_VERIFY_FAILED`,
 * ...) and keeps the module's number and name in `context.deviceCode` / `context.deviceName`.
 */
import { AgentError } from '../../src/core/errors.js';
import { commandName, NACK_CODES } from './protocol.js';

export class Gt521NackError extends AgentError {
  /** The module's error code (0x1001..0x1012), or the duplicated slot (< 0x1000). */
  readonly nack: number;

  constructor(nack: number, command: number) {
    const info = NACK_CODES[nack];
    const cmd = commandName(command);
    if (info) {
      super(
        `DRIVER_GT521_${info.name.slice('NACK_'.length)}`,
        `GT-521 ${cmd}: ${info.message}`,
        { family: 'gt521', command: cmd, deviceCode: nack, deviceName: info.name },
        { hint: info.hint, retryable: info.retryable },
      );
    } else if (nack < 0x1000) {
      super(
        'DRIVER_GT521_DUPLICATE',
        `GT-521 ${cmd}: this finger is already enrolled in slot ${nack}`,
        { family: 'gt521', command: cmd, deviceCode: nack, deviceName: 'NACK_DUPLICATED_ID', duplicateOf: nack },
        { hint: `The finger is already stored in slot ${nack}; delete that slot first or skip the duplicate check.` },
      );
    } else {
      super(
        'DRIVER_GT521_UNKNOWN_NACK',
        `GT-521 ${cmd}: the module refused with an unknown error 0x${nack.toString(16)}`,
        { family: 'gt521', command: cmd, deviceCode: nack, deviceName: 'UNKNOWN' },
        { hint: 'Check the module firmware version; power-cycle the module.' },
      );
    }
    this.nack = nack;
  }
}

export function timeoutError(command: number, ms: number, path: string, stage: string): AgentError {
  return new AgentError(
    'DRIVER_TIMEOUT',
    `GT-521 ${commandName(command)}: no ${stage} from the module on ${path} within ${ms} ms`,
    { family: 'gt521', command: commandName(command), ms, path, stage },
    {
      hint: 'Check that the module is powered and wired (TX/RX crossed), and that the baud rate matches (9600 by default).',
      retryable: true,
    },
  );
}
