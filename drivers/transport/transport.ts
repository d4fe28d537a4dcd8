/**
 * The hardware seam. A transport moves bytes (serial) or reports (HID) and signals a disconnect;
 * drivers above it never touch serialport or node-hid directly, so every driver runs the same on
 * a real device, a pseudo-terminal and the in-memory pair.
 *
 * Contract (checked by one contract suite run against every implementation):
 * - `open()` resolves once the device is usable, or rejects with an AgentError
 *   (`TRANSPORT_OPEN_FAILED`, `TRANSPORT_BUSY`, `TRANSPORT_NOT_FOUND`, `TRANSPORT_PERMISSION`).
 * - `write()` rejects with `TRANSPORT_DISCONNECTED` when the device is gone, never hangs.
 * - `data` carries bytes (or one whole input report) in arrival order.
 * - `disconnect` fires once when the device goes away without `close()` being called; after it
 *   every pending and later `write()` rejects with `TRANSPORT_DISCONNECTED`.
 * - `close()` is idempotent and never emits `disconnect`.
 *
 * Tested in test/unit/drivers/transport/memory-transport.test.ts,
 * test/unit/drivers/transport/serial-transport.test.ts and
 * test/unit/drivers/transport/hid-transport.test.ts (transport.contract.ts, the contract above,
 * against each).
 */
import type { TypedEmitter } from '../../src/core/events.js';

export interface TransportEvents extends Record<string, unknown> {
  /** Bytes from a byte stream, or one input report (without the report id) from HID. */
  data: Buffer;
  /** The device went away while open. */
  disconnect: Error;
}

export interface ByteTransport extends TypedEmitter<TransportEvents> {
  readonly kind: 'serial' | 'hid' | 'memory';
  /** Device path (`/dev/ttyUSB0`, a HID path, or a memory name). */
  readonly path: string;
  readonly isOpen: boolean;
  open(): Promise<void>;
  /** Writes bytes (serial) or one output report whose first byte is the report id (HID). */
  write(data: Uint8Array): Promise<void>;
  close(): Promise<void>;
  /** Serial only: changes the line speed of the open port (after the device was told to switch). */
  setBaudRate?(baud: number): Promise<void>;
}

/** HID extras: feature reports. The first byte of a report is its report id. */
export interface ReportTransport extends ByteTransport {
  sendFeatureReport(data: Uint8Array): Promise<void>;
  getFeatureReport(reportId: number, length: number): Promise<Buffer>;
}
