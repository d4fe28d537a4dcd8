/**
 * Opens a scanner by family and path: the one place that knows which driver serves which family.
 *
 *   const scanner = await openScanner({ family: 'r30x', path: '/dev/ttyUSB0', baud: 57600 });
 *
 * `createScanner` builds it without opening (the agent opens it under its own retry policy).
 */
import { AgentError } from '../src/core/errors.js';
import type { Scanner, ScannerFamily } from './scanner.js';
import { SerialTransport } from './transport/serial-transport.js';
import { R30xScanner } from './r30x/scanner.js';
import { Gt521Scanner } from './gt521/scanner.js';
import { IrisHidScanner } from './iris-hid/scanner.js';
import { ReportId as IrisReportId } from './iris-hid/protocol.js';
import { HidTransport } from './transport/hid-transport.js';

export interface ScannerTarget {
  family: ScannerFamily;
  path: string;
  baud?: number;
  /** Module password (R30x VfyPwd), default 0. */
  password?: number;
  /** Exchange timeout on top of the wire time (ms). */
  timeoutMs?: number;
}

export const DEFAULT_BAUDS: Partial<Record<ScannerFamily, number>> = { r30x: 57600, gt521: 9600 };

export async function createScanner(target: ScannerTarget): Promise<Scanner> {
  switch (target.family) {
    case 'r30x': {
      const baud = target.baud ?? DEFAULT_BAUDS.r30x!;
      return new R30xScanner(new SerialTransport({ path: target.path, baud }), {
        baud,
        ...(target.password !== undefined ? { password: target.password } : {}),
        ...(target.timeoutMs !== undefined ? { timeoutMs: target.timeoutMs } : {}),
      });
    }
    case 'gt521': {
      const baud = target.baud ?? DEFAULT_BAUDS.gt521!;
      return new Gt521Scanner({ transport: new SerialTransport({ path: target.path, baud }), baud, ...(target.timeoutMs !== undefined ? { timeoutMs: target.timeoutMs } : {}) });
    }
    case 'iris-hid':
      // A HID path (/dev/hidrawN); no baud rate.
      return new IrisHidScanner({ transport: new HidTransport({ path: target.path, inputReportId: IrisReportId.Input }), ...(target.timeoutMs !== undefined ? { timeoutMs: target.timeoutMs } : {}) });
    default:
      throw new AgentError('DRIVER_UNKNOWN_FAMILY', `no driver for scanner family "${target.family}"`, { family: target.family }, { hint: 'use r30x, gt521 or iris-hid; "edge-agent devices" tells which one is attached' });
  }
}

/** Creates and opens the scanner; resolves once the module answered. */
export async function openScanner(target: ScannerTarget): Promise<Scanner> {
  const scanner = await createScanner(target);
  await scanner.open();
  return scanner;
}
