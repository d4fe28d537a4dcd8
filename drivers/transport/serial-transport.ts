/**
 * A serial port (USB-UART adapter, the Pi's UART, or a pseudo-terminal) on `serialport`.
 *
 * - Open errors become `TRANSPORT_NOT_FOUND` (no such device), `TRANSPORT_PERMISSION` (not in the
 *   `dialout` group / no udev rule), `TRANSPORT_BUSY` (another process holds it: named where
 *   /proc shows it) or `TRANSPORT_OPEN_FAILED` (bad settings), each with a hint.
 * - A device that goes away is noticed three ways: serialport's own `close` with `disconnected`,
 *   a failed write (EIO), and a watchdog that checks the device path still exists (a USB adapter
 *   pulled out, or the pseudo-terminal's socat gone, does not always wake a pending read).
 *   Then `disconnect` fires once and every pending or later write rejects with
 *   `TRANSPORT_DISCONNECTED`; a driver waiting for a reply fails at once instead of hanging.
 * - `open()` again after a disconnect opens a fresh port on the same path (see `reopen.ts`).
 * - `binding` swaps serialport's OS binding for another (the tests use @serialport/binding-mock to
 *   run this very class, serialport's stream included, without a tty); the path watchdog is then
 *   off, the path not being a file.
 */
import { existsSync } from 'node:fs';
import { SerialPort } from 'serialport';
import { AgentError } from '../../src/core/errors.js';
import { TypedEmitter } from '../../src/core/events.js';
import { logger } from '../../src/core/logger.js';
import type { ByteTransport, TransportEvents } from './transport.js';
import { closedError, disconnectedError } from './errors.js';
import { busyError } from './port-holders.js';

const log = logger('drivers:serial');

/** A serialport binding (the OS one by default; @serialport/binding-mock in tests). */
export type SerialBinding = object;

export interface SerialTransportOptions {
  path: string;
  baud: number;
  /** How often the watchdog checks that the device path still exists (ms). */
  watchdogMs?: number;
  /** Another serialport binding than the OS's. */
  binding?: SerialBinding;
}

type SerialPortOptions = ConstructorParameters<typeof SerialPort>[0];

export class SerialTransport extends TypedEmitter<TransportEvents> implements ByteTransport {
  readonly kind = 'serial' as const;
  readonly path: string;
  #baud: number;
  #port: SerialPort | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #watchdogMs: number;
  readonly #binding: SerialBinding | undefined;
  #gone = false;
  #pending = new Set<(err?: Error) => void>();

  constructor(options: SerialTransportOptions) {
    super();
    this.path = options.path;
    this.#baud = options.baud;
    this.#watchdogMs = options.watchdogMs ?? 250;
    this.#binding = options.binding;
  }

  get baud(): number {
    return this.#baud;
  }

  get isOpen(): boolean {
    return this.#port !== undefined && !this.#gone;
  }

  async open(): Promise<void> {
    if (this.isOpen) return;
    this.#gone = false;
    const port = new SerialPort({
      path: this.path,
      baudRate: this.#baud,
      autoOpen: false,
      ...(this.#binding ? { binding: this.#binding } : {}),
    } as SerialPortOptions);
    await new Promise<void>((resolve, reject) => {
      port.open((err) => (err ? reject(openError(this.path, this.#baud, err)) : resolve()));
    });
    this.#port = port;
    port.on('data', (chunk: Buffer) => {
      if (this.#port === port) this.emit('data', chunk);
    });
    port.on('close', (err?: Error & { disconnected?: boolean }) => {
      if (this.#port === port && err) this.#lost(err.message, err);
    });
    port.on('error', (err: Error) => {
      if (this.#port === port) this.#lost(err.message, err);
    });
    if (!this.#binding) {
      this.#watchdog = setInterval(() => {
        if (this.#port === port && !existsSync(this.path)) this.#lost('device path disappeared');
      }, this.#watchdogMs);
      this.#watchdog.unref();
    }
    log.debug({ path: this.path, baud: this.#baud }, 'serial port open');
  }

  async write(data: Uint8Array): Promise<void> {
    const port = this.#port;
    if (this.#gone) throw disconnectedError(this.path);
    if (!port) throw closedError(this.path);
    await new Promise<void>((resolve, reject) => {
      // Settled by the write callbacks, or by #lost when the device goes away first.
      const settle = (err?: Error) => {
        if (!this.#pending.delete(settle)) return;
        if (err) reject(err);
        else resolve();
      };
      this.#pending.add(settle);
      port.write(Buffer.from(data), (err) => {
        if (err) {
          this.#lost(err.message, err);
          settle(disconnectedError(this.path, err.message, err));
          return;
        }
        port.drain((err2) => {
          if (err2) {
            this.#lost(err2.message, err2);
            settle(disconnectedError(this.path, err2.message, err2));
          } else settle();
        });
      });
    });
  }

  /** Changes the line speed of the open port (after telling the device to switch). */
  async setBaudRate(baud: number): Promise<void> {
    this.#baud = baud;
    const port = this.#port;
    if (!port || this.#gone) return;
    await new Promise<void>((resolve, reject) =>
      port.update({ baudRate: baud }, (err) =>
        err
          ? reject(
              new AgentError(
                'TRANSPORT_OPEN_FAILED',
                `could not set ${this.path} to ${baud} baud: ${err.message}`,
                { path: this.path, baud },
                { cause: err },
              ),
            )
          : resolve(),
      ),
    );
  }

  async close(): Promise<void> {
    const port = this.#port;
    this.#port = undefined;
    this.#stopWatchdog();
    for (const settle of [...this.#pending]) settle(closedError(this.path));
    if (!port) return;
    if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    port.removeAllListeners();
  }

  #stopWatchdog(): void {
    if (this.#watchdog) clearInterval(this.#watchdog);
    this.#watchdog = undefined;
  }

  #lost(detail: string, cause?: unknown): void {
    if (this.#gone || !this.#port) return;
    this.#gone = true;
    this.#stopWatchdog();
    const port = this.#port;
    this.#port = undefined;
    log.warn({ path: this.path, detail }, 'serial device went away');
    if (port.isOpen) port.close(() => undefined);
    const err = disconnectedError(this.path, detail, cause);
    for (const settle of [...this.#pending]) settle(err);
    this.emit('disconnect', err);
  }
}

/** Maps an open failure to a typed error with what to do about it. */
export function openError(path: string, baud: number, err: Error): AgentError {
  const msg = err.message;
  const ctx = { path, baud };
  if (/ENOENT|No such file|cannot find|not found/i.test(msg) || !existsSync(path)) {
    return new AgentError('TRANSPORT_NOT_FOUND', `no serial device at ${path}`, ctx, {
      hint: 'check the cable and the path; run "edge-agent devices" to list the ports this machine has',
      retryable: true,
      cause: err,
    });
  }
  if (/EACCES|EPERM|Permission denied/i.test(msg)) {
    return new AgentError('TRANSPORT_PERMISSION', `not allowed to open ${path}`, ctx, {
      hint: 'add the agent user to the dialout group (sudo usermod -aG dialout edge-agent, then restart the service), or install a udev rule giving it the device (SUBSYSTEM=="tty", ATTRS{idVendor}=="xxxx", GROUP="dialout", MODE="0660")',
      cause: err,
    });
  }
  // serialport takes an exclusive lock (flock): "Error Resource temporarily unavailable Cannot lock port".
  if (/EBUSY|EAGAIN|lock(ed)? port|cannot lock|Resource temporarily unavailable|busy/i.test(msg)) {
    return busyError(path, path, ctx, err);
  }
  return new AgentError('TRANSPORT_OPEN_FAILED', `could not open ${path} at ${baud} baud: ${msg}`, ctx, {
    hint: 'check that the path is a serial device and that the baud rate is one the adapter supports',
    retryable: true,
    cause: err,
  });
}

/** Opens the serial port at `path`, runs `fn` on it and closes it again, whatever happens (probes). */
export async function withSerialPort<T>(
  path: string,
  baud: number,
  fn: (transport: SerialTransport) => Promise<T>,
  options: { binding?: SerialBinding } = {},
): Promise<T> {
  const transport = new SerialTransport({ path, baud, ...options });
  await transport.open();
  try {
    return await fn(transport);
  } finally {
    await transport.close();
  }
}
