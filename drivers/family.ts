/**
 * What a scanner family gives the rest of the drivers: everything that used to be spread over
 * `switch (family)` blocks (open-scanner, simulated, discovery). One entry a family, listed in
 * families.ts; nothing else in drivers/ names a family.
 *
 * A serial family (a byte stream: a UART, a USB adapter, a pty, the memory pair) is described by
 * `serialFamily()` from four pieces (its scanner on a transport, its probe on a transport, its
 * simulator on a device-side transport, its baud rates); the rest (opening the port, the probe's
 * port, the in-process pair) is the same for every serial family and written once here.
 *
 * Tested in test/unit/drivers/families.test.ts (every family through its entry: a scanner built on
 * a serial port without opening it, a serial family's simulator on any byte transport).
 */
import type { ResolutionTable } from './resolution.js';
import type { ScannerModality } from '../src/core/modality.js';
import type { Scanner, ScannerFamily } from './scanner.js';
import type { SimulatorControl, SimulatorOptions } from './simulator/control.js';
import { createMemoryPair } from './transport/memory-transport.js';
import { SerialTransport, withSerialPort } from './transport/serial-transport.js';
import type { ByteTransport } from './transport/transport.js';

/** Where a scanner is: its family, its device path and, for serial families, the line. */
export interface ScannerTarget {
  family: ScannerFamily;
  path: string;
  baud?: number;
  /** Module password (R30x VfyPwd), default 0. */
  password?: number;
  /** Exchange timeout on top of the wire time (ms). */
  timeoutMs?: number;
  /** Badge readers: the line format the reader sends (`em4100-dec`, ...; drivers/badge/formats.ts). */
  format?: string;
}

/** What a discovery probe learnt about the device that answered. */
export interface ProbeFound {
  model: string;
  firmware: string | null;
  capacity: number | null;
  templates: number | null;
}

export interface SimulatedScanner<S extends SimulatorControl = SimulatorControl> {
  scanner: Scanner;
  simulator: S;
}

export interface ScannerFamilyEntry<
  F extends ScannerFamily = ScannerFamily,
  Sim extends SimulatorControl = SimulatorControl,
  Opts = object,
> {
  readonly family: F;
  readonly modality: ScannerModality;
  /** `serial`: a byte stream (discovery probes serial ports); `hid`: USB HID reports. */
  readonly transport: 'serial' | 'hid';
  /** The line speed a module ships with (null for HID). */
  readonly defaultBaud: number | null;
  /** The speeds discovery tries, most likely first (empty for HID, and for a device that cannot be probed). */
  readonly probeBauds: readonly number[];
  /** The sensor resolution of each model the family knows, and the family's nominal one (resolution.ts). */
  readonly resolution: ResolutionTable;
  /** False for a device that says nothing until used (a badge reader): discovery does not probe for it. */
  readonly probeable?: false;
  /** A scanner on the device at `target.path`, not opened (the agent opens it under its own retry policy). */
  create(target: ScannerTarget): Scanner;
  /**
   * Is one of this family's devices at `path`? Null when nothing answers like one; transport
   * errors (no such port, no permission) are thrown so discovery can say so.
   */
  probe(path: string, options?: { baud?: number; timeoutMs?: number }): Promise<ProbeFound | null>;
  /** A scanner wired in-process to this family's byte-exact simulator (not opened). */
  simulate(options: SimulatorOptions & { scanner?: Opts }): Promise<SimulatedScanner<Sim>>;
  /** Byte-stream families: the simulator on a device-side transport (a pty end), opened if needed. */
  attachSimulator?(transport: ByteTransport, options: SimulatorOptions): Promise<Sim>;
}

/** The line options every serial scanner takes. */
export interface SerialScannerOptions {
  baud?: number;
  password?: number;
  timeoutMs?: number;
  format?: string;
}

export interface SerialFamilyDefinition<F extends ScannerFamily, Sim extends SimulatorControl, Opts extends SerialScannerOptions> {
  family: F;
  modality: ScannerModality;
  defaultBaud: number;
  probeBauds: readonly number[];
  resolution: ResolutionTable;
  /** The family's scanner on an (unopened) byte transport. */
  scanner(transport: ByteTransport, options: Opts): Scanner;
  /** The discovery probe on an open byte transport at `baud`. */
  probe(transport: ByteTransport, baud: number, timeoutMs: number): Promise<ProbeFound | null>;
  /** The family's simulator on a device-side byte transport, serving once this resolves. */
  simulator(transport: ByteTransport, options: SimulatorOptions): Promise<Sim>;
}

/** How long a serial probe waits for each answer by default (ms). */
export const DEFAULT_PROBE_TIMEOUT_MS = 250;

/** A serial family's entry from its definition. */
export function serialFamily<F extends ScannerFamily, Sim extends SimulatorControl, Opts extends SerialScannerOptions>(
  def: SerialFamilyDefinition<F, Sim, Opts>,
): ScannerFamilyEntry<F, Sim, Opts> {
  return {
    family: def.family,
    modality: def.modality,
    transport: 'serial',
    defaultBaud: def.defaultBaud,
    probeBauds: def.probeBauds,
    resolution: def.resolution,
    create(target) {
      const baud = target.baud ?? def.defaultBaud;
      const options = {
        baud,
        ...(target.password !== undefined ? { password: target.password } : {}),
        ...(target.timeoutMs !== undefined ? { timeoutMs: target.timeoutMs } : {}),
        ...(target.format !== undefined ? { format: target.format } : {}),
      };
      return def.scanner(new SerialTransport({ path: target.path, baud }), options as Opts);
    },
    probe(path, options = {}) {
      const baud = options.baud ?? def.defaultBaud;
      return withSerialPort(path, baud, (transport) => def.probe(transport, baud, options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS));
    },
    async simulate(options) {
      const { host, device } = createMemoryPair(`sim-${def.family}`);
      await device.open();
      const simulator = await def.simulator(device, { pacing: false, ...options });
      const scanner = def.scanner(host, {
        baud: options.baud ?? def.defaultBaud,
        ...(options.format !== undefined ? { format: options.format } : {}),
        ...options.scanner,
      } as Opts);
      return { scanner, simulator };
    },
    attachSimulator: (transport, options) => def.simulator(transport, options),
  };
}
