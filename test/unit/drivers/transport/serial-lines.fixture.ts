/**
 * Serial lines for the driver suites: a host end the drivers open as a serial port (the real
 * SerialTransport, serialport's stream included) and a device end a simulator sits on. Two kinds,
 * one interface, so a suite is written once and run over both:
 *
 * - `ptyLine()`: a real pseudo-terminal pair made by socat (where socat exists), the host end at a
 *   stable path that survives a replug.
 * - `mockLine()`: serialport's own mock binding (@serialport/binding-mock) on the host end, wired
 *   to an in-process device end: what the host writes reaches the device, what the device writes
 *   the host reads, the line speed is the port's (setBaudRate follows), and unplugging makes the
 *   port fail and vanish like a pulled USB adapter. No tty, no socat.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockBinding, type MockPortBinding } from '@serialport/binding-mock';
import { TypedEmitter } from '../../../../src/core/events.js';
import { closedError, disconnectedError } from '../../../../drivers/transport/errors.js';
import { SerialTransport, withSerialPort, type SerialBinding } from '../../../../drivers/transport/serial-transport.js';
import { createSocatPair, type SocatPair } from '../../../../drivers/transport/socat-pair.js';
import type { ByteTransport, TransportEvents } from '../../../../drivers/transport/transport.js';

export interface SerialLine {
  readonly kind: 'pty' | 'mock';
  /** What the host opens; the same path after a replug. */
  readonly hostPath: string;
  /** A host-side serial port on the line (not opened). */
  host(baud: number, options?: { watchdogMs?: number }): SerialTransport;
  /** The device end of the current cable (not opened): where a simulator sits. */
  device(baud: number): ByteTransport;
  /** The host side's line speed, as a module would notice it (stty on a pty, the port setting on the mock); `fresh`: not from a cache. */
  hostBaud(fresh?: boolean): number | null;
  /** Opens a host port around `fn` and closes it after (a discovery probe). */
  withHostPort<T>(baud: number, fn: (transport: SerialTransport) => Promise<T>): Promise<T>;
  /** Pulls the cable: the host's port fails and its path vanishes; the device end is gone. */
  unplug(): Promise<void>;
  /** A cable again at the same host path, with a fresh device end. */
  replug(): Promise<void>;
  close(): Promise<void>;
}

/** A socat pty pair whose host end stays at one path across replugs. */
export async function ptyLine(): Promise<SerialLine> {
  const dir = mkdtempSync(join(tmpdir(), 'pty-line-'));
  const hostPath = join(dir, 'tty');
  let pair: SocatPair | null = await createSocatPair(hostPath);
  // stty costs a few ms: read again only after a pause (a new session) or when asked, as the
  // simulate command does.
  let lastCall = -Infinity;
  let speed: number | null = null;
  return {
    kind: 'pty',
    hostPath,
    host: (baud, options = {}) => new SerialTransport({ path: hostPath, baud, ...options }),
    device: (baud) => new SerialTransport({ path: pair!.deviceLink, baud }),
    hostBaud(fresh = false) {
      const now = performance.now();
      if (fresh || now - lastCall > 100) {
        try {
          speed = Number(
            execFileSync('stty', ['-F', hostPath, 'speed'], {
              encoding: 'utf8',
              stdio: ['ignore', 'pipe', 'ignore'],
              timeout: 1000,
            }).trim(),
          );
        } catch {
          speed = null;
        }
      }
      lastCall = now;
      return speed;
    },
    withHostPort: (baud, fn) => withSerialPort(hostPath, baud, fn),
    async unplug() {
      await pair?.close();
      pair = null;
    },
    async replug() {
      pair = await createSocatPair(hostPath);
    },
    async close() {
      await pair?.close();
      pair = null;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The device end of a mock line: an in-process ByteTransport wired to the host's mock port. */
class MockDeviceEnd extends TypedEmitter<TransportEvents> implements ByteTransport {
  readonly kind = 'serial' as const;
  #open = false;
  #gone = false;

  constructor(
    readonly path: string,
    private readonly hostPort: () => MockPortBinding | null,
  ) {
    super();
  }

  get isOpen(): boolean {
    return this.#open;
  }

  async open(): Promise<void> {
    if (this.#gone) throw disconnectedError(this.path, 'unplugged');
    this.#open = true;
  }

  /** What the device sends reaches the host's port (dropped while the host has it closed, as on a line). */
  async write(data: Uint8Array): Promise<void> {
    if (this.#gone) throw disconnectedError(this.path, 'unplugged');
    if (!this.#open) throw closedError(this.path);
    const port = this.hostPort();
    if (port?.isOpen) port.emitData(Buffer.from(data));
  }

  /** Bytes the host wrote. */
  fromHost(data: Buffer): void {
    const copy = Buffer.from(data);
    setImmediate(() => {
      if (this.#open) this.emit('data', copy);
    });
  }

  /** The cable is pulled: the device end is gone for good. */
  cut(): void {
    if (this.#gone) return;
    this.#gone = true;
    const wasOpen = this.#open;
    this.#open = false;
    if (wasOpen) setImmediate(() => this.emit('disconnect', disconnectedError(this.path, 'unplugged')));
  }

  async close(): Promise<void> {
    this.#open = false;
  }
}

let mockLines = 0;

/** A line through @serialport/binding-mock: serialport's stream on the host end, in-process device end. */
export async function mockLine(): Promise<SerialLine> {
  const hostPath = `/dev/mock-tty${process.pid}-${++mockLines}`;
  MockBinding.createPort(hostPath);
  let plugged = true;
  let hostPort: MockPortBinding | null = null;
  let device = new MockDeviceEnd(`${hostPath}:device`, () => hostPort);
  const binding = {
    list: () => MockBinding.list(),
    async open(options: Parameters<typeof MockBinding.open>[0]) {
      if (!plugged) throw new Error(`Error: No such file or directory, cannot open ${options.path}`);
      const port = await MockBinding.open(options);
      const write = port.write.bind(port);
      const end = device;
      // What the host writes reaches the device end of the cable it was written on.
      port.write = async (buffer: Buffer) => {
        await write(buffer);
        end.fromHost(buffer);
      };
      hostPort = port;
      return port;
    },
  };
  const fail = (port: MockPortBinding) => {
    const err = new Error('EIO: the device went away');
    port.read = async () => {
      throw err;
    };
    port.write = async () => {
      throw err;
    };
    // A read waiting for data fails now; one about to wait fails on the next turn.
    const failPending = () => (port as unknown as { pendingRead: ((e: Error) => void) | null }).pendingRead?.(err);
    failPending();
    setImmediate(failPending);
  };
  return {
    kind: 'mock',
    hostPath,
    host: (baud) => new SerialTransport({ path: hostPath, baud, binding: binding as SerialBinding }),
    device: () => device,
    hostBaud: () => (hostPort?.isOpen ? (hostPort.port.openOpt?.baudRate ?? null) : null),
    withHostPort: (baud, fn) => withSerialPort(hostPath, baud, fn, { binding: binding as SerialBinding }),
    async unplug() {
      plugged = false;
      device.cut();
      if (hostPort?.isOpen) fail(hostPort);
      hostPort = null;
    },
    async replug() {
      plugged = true;
      device = new MockDeviceEnd(`${hostPath}:device`, () => hostPort);
    },
    async close() {
      plugged = false;
      device.cut();
      if (hostPort?.isOpen) await hostPort.close().catch(() => undefined);
      hostPort = null;
    },
  };
}
