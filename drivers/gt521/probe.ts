/**
 * Discovery probe: is there a GT-521 on this port at this baud rate? Sends Open (with its device
 * info), asks the capacity and the enrolled count, and closes the port. Resolves null when nothing
 * answers like a GT-521 within `timeoutMs` per exchange (no reply, garbage, bad checksums);
 * transport errors (no such port, no permission) are thrown so discovery can say so.
 *
 * Tested in test/unit/drivers/gt521/gt521-serial.test.ts (the discovery probe over a serial line)
 * and test/integration/drivers-gt521-pty.test.ts.
 */
import type { ByteTransport } from '../transport/transport.js';
import { withSerialPort } from '../transport/serial-transport.js';
import { Gt521Driver, formatFirmware, formatSerial } from './driver.js';

export interface Gt521ProbeResult {
  model: string;
  firmware: string;
  capacity: number;
  templates: number;
  serial: string;
}

const NOT_A_GT521 = new Set(['DRIVER_TIMEOUT', 'DRIVER_CHECKSUM', 'DRIVER_FRAME']);

/** Probes an already opened transport (left open). */
export async function probeGt521Transport(transport: ByteTransport, baud: number, timeoutMs: number): Promise<Gt521ProbeResult | null> {
  const driver = new Gt521Driver(transport, { baud, timeoutMs, retries: 0 });
  try {
    const dev = await driver.open();
    const { model, capacity } = await driver.detectCapacity();
    const templates = await driver.getEnrollCount();
    return { model, firmware: formatFirmware(dev.firmwareVersion), capacity, templates, serial: formatSerial(dev.serialNumber) };
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (NOT_A_GT521.has(code) || code.startsWith('DRIVER_GT521_')) return null;
    throw err;
  } finally {
    driver.detach();
  }
}

export function probeGt521(path: string, baud: number, timeoutMs: number): Promise<Gt521ProbeResult | null> {
  return withSerialPort(path, baud, (transport) => probeGt521Transport(transport, baud, timeoutMs));
}
