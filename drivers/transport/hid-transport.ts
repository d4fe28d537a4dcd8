/**
 * A USB HID device on node-hid (`HIDAsync`: reads run on node-hid's own thread, never blocking
 * the event loop). Output reports go out with `write`, feature reports both ways, and every input
 * report arrives as one `data` event.
 *
 * Report ids: with `numberedReports` (the default) the first byte of every report is its id.
 * `write` and `sendFeatureReport` take the id as their first byte; `data` carries one input
 * report WITHOUT its id (the transport contract), after checking it against `inputReportId` when
 * one is given (reports with other ids are dropped).
 *
 * The seam: `open` (default `HIDAsync.open`) returns anything with node-hid's HIDAsync shape, so
 * the transport runs the same on a real device and on an in-process device (the iris simulator,
 * the tests; this machine has no /dev/uhid to fake a kernel HID device).
 *
 * A device another process holds (hidraw does not stop a second reader, which would take some of
 * the reports) is refused with `TRANSPORT_BUSY`, naming it.
 *
 * Disconnect: node-hid reports a removed device as an `error` from its read loop; that (or a
 * failed call whose /dev node has vanished) makes the transport emit `disconnect` once and reject
 * every pending and later call with `TRANSPORT_DISCONNECTED`. A call the device refuses while it
 * is still there (an unsupported feature report) is `TRANSPORT_IO`, not a disconnect.
 */
import { existsSync } from 'node:fs';
import { AgentError } from '../../src/core/errors.js';
import { TypedEmitter } from '../../src/core/events.js';
import { logger } from '../../src/core/logger.js';
import { closedError, disconnectedError } from './errors.js';
import { busyError, portHolders } from './port-holders.js';
import type { ReportTransport, TransportEvents } from './transport.js';

const log = logger('drivers:hid');

/**
 * The part of node-hid's `HIDAsync` the transport uses. Each `data` event hands over a buffer the
 * device does not touch again (node-hid makes a new one for every read): the transport passes it,
 * or a view of it without the report id, on without copying.
 */
export interface HidDeviceHandle {
  on(event: 'data', listener: (data: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeAllListeners(event?: string): unknown;
  write(values: number[] | Buffer): Promise<number>;
  sendFeatureReport(data: number[] | Buffer): Promise<number>;
  getFeatureReport(reportId: number, reportLength: number): Promise<Buffer>;
  close(): Promise<void>;
}

export type HidOpener = (path: string) => Promise<HidDeviceHandle>;

export interface HidTransportOptions {
  /** The HID path (`/dev/hidraw0` with the hidraw backend). */
  path: string;
  /** Reports carry an id in their first byte (default true). */
  numberedReports?: boolean;
  /** Keep only input reports with this id (numbered reports only). */
  inputReportId?: number;
  /** Opens the device (default: node-hid `HIDAsync.open`). */
  open?: HidOpener;
}

/** The real opener: node-hid loaded on first use, so hosts without the native addon still load this file. */
export const nodeHidOpener: HidOpener = async (path) => {
  const hid = await import('node-hid');
  return (await hid.HIDAsync.open(path)) as unknown as HidDeviceHandle;
};

export class HidTransport extends TypedEmitter<TransportEvents> implements ReportTransport {
  readonly kind = 'hid' as const;
  readonly path: string;
  readonly #numbered: boolean;
  readonly #inputReportId: number | undefined;
  readonly #opener: HidOpener;
  #device: HidDeviceHandle | undefined;
  #gone = false;

  constructor(options: HidTransportOptions) {
    super();
    this.path = options.path;
    this.#numbered = options.numberedReports ?? true;
    this.#inputReportId = options.inputReportId;
    this.#opener = options.open ?? nodeHidOpener;
  }

  get isOpen(): boolean {
    return this.#device !== undefined && !this.#gone;
  }

  async open(): Promise<void> {
    if (this.isOpen) return;
    // hidraw lets any number of processes open a device, and each then gets only some of its
    // reports: a second reader (an enrolment beside the running agent) would break both. Refuse
    // while another process holds it (as /proc shows it: every process to root).
    if (this.path.startsWith('/dev/') && existsSync(this.path)) {
      const others = portHolders(this.path).filter((h) => !h.self);
      if (others.length > 0) throw busyError(this.path, `HID device ${this.path}`, { path: this.path }, undefined, others);
    }
    let device: HidDeviceHandle;
    try {
      device = await this.#opener(this.path);
    } catch (err) {
      throw hidOpenError(this.path, err as Error);
    }
    this.#gone = false;
    this.#device = device;
    // No copy: a 640×480 iris result is some 5,200 reports, and copying each one (already a buffer
    // of its own) cost more than the driver's reassembly.
    device.on('data', (report: Buffer) => {
      if (this.#device !== device) return;
      if (!this.#numbered) {
        this.emit('data', report);
        return;
      }
      if (report.length === 0) return;
      if (this.#inputReportId !== undefined && report[0] !== this.#inputReportId) return;
      this.emit('data', report.subarray(1));
    });
    device.on('error', (err: Error) => {
      if (this.#device === device) this.#lost(err.message, err);
    });
    log.debug({ path: this.path }, 'HID device open');
  }

  async write(data: Uint8Array): Promise<void> {
    const device = this.#usable();
    try {
      await device.write(Buffer.from(data));
    } catch (err) {
      throw await this.#failed('output report', err as Error);
    }
  }

  async sendFeatureReport(data: Uint8Array): Promise<void> {
    const device = this.#usable();
    try {
      await device.sendFeatureReport(Buffer.from(data));
    } catch (err) {
      throw await this.#failed(`feature report ${data[0]}`, err as Error);
    }
  }

  async getFeatureReport(reportId: number, length: number): Promise<Buffer> {
    const device = this.#usable();
    try {
      return Buffer.from(await device.getFeatureReport(reportId, length));
    } catch (err) {
      throw await this.#failed(`feature report ${reportId}`, err as Error);
    }
  }

  async close(): Promise<void> {
    const device = this.#device;
    this.#device = undefined;
    if (!device) return;
    device.removeAllListeners('data');
    device.removeAllListeners('error');
    if (!this.#gone) await device.close().catch((err: unknown) => log.debug({ err: String(err) }, 'HID close failed'));
  }

  /**
   * A call failed: the device is gone (its read loop failed, or its /dev node vanished) — a
   * disconnect — or it refused this report while still there — `TRANSPORT_IO`.
   */
  async #failed(what: string, err: Error): Promise<AgentError> {
    await new Promise((r) => setImmediate(r));
    if (this.#gone) return disconnectedError(this.path, err.message, err);
    if (this.path.startsWith('/dev/') && !existsSync(this.path)) {
      this.#lost(err.message, err);
      return disconnectedError(this.path, err.message, err);
    }
    return new AgentError(
      'TRANSPORT_IO',
      `HID device ${this.path} refused the ${what}: ${err.message}`,
      { path: this.path, what },
      {
        hint: 'the device is there but did not take the report: check it is the expected device and firmware',
        retryable: true,
        cause: err,
      },
    );
  }

  #usable(): HidDeviceHandle {
    if (this.#gone) throw disconnectedError(this.path);
    if (!this.#device) throw closedError(this.path);
    return this.#device;
  }

  #lost(detail: string, cause?: unknown): void {
    if (this.#gone || !this.#device) return;
    this.#gone = true;
    const device = this.#device;
    this.#device = undefined;
    device.removeAllListeners('data');
    device.removeAllListeners('error');
    device.close().catch(() => undefined);
    log.warn({ path: this.path, detail }, 'HID device went away');
    this.emit('disconnect', disconnectedError(this.path, detail, cause));
  }
}

/** Maps a node-hid open failure to a typed error with what to do. */
export function hidOpenError(path: string, err: Error): AgentError {
  const ctx = { path };
  const onDisk = path.startsWith('/dev/');
  if (onDisk && !existsSync(path)) {
    return new AgentError('TRANSPORT_NOT_FOUND', `no HID device at ${path}`, ctx, {
      hint: 'check the USB cable; run "edge-agent devices" to list the HID devices this machine sees',
      retryable: true,
      cause: err,
    });
  }
  if (/EBUSY|busy/i.test(err.message)) return busyError(path, `HID device ${path}`, ctx, err);
  // On hidraw an existing node that will not open is almost always a permission problem.
  if (onDisk || /EACCES|EPERM|permission/i.test(err.message)) {
    return new AgentError('TRANSPORT_PERMISSION', `not allowed to open ${path}: ${err.message}`, ctx, {
      hint: 'install a udev rule giving the agent user the device: SUBSYSTEM=="hidraw", ATTRS{idVendor}=="xxxx", MODE="0660", GROUP="plugdev", then replug',
      cause: err,
    });
  }
  if (/could not open|cannot open|not found|no such/i.test(err.message)) {
    return new AgentError('TRANSPORT_NOT_FOUND', `no HID device at ${path}: ${err.message}`, ctx, {
      hint: 'check the USB cable; run "edge-agent devices" to list the HID devices this machine sees',
      retryable: true,
      cause: err,
    });
  }
  return new AgentError('TRANSPORT_OPEN_FAILED', `could not open HID device ${path}: ${err.message}`, ctx, {
    hint: 'check that no other program holds the device',
    retryable: true,
    cause: err,
  });
}
