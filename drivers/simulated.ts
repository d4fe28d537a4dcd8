/**
 * Simulated scanners, in-process: a memory transport pair with the family's byte-exact simulator
 * on the device end and the real driver on the host end. Everything above the transport is the
 * code that runs against hardware.
 *
 *   const { scanner, simulator } = await createSimulatedScanner('r30x', { fingers: ... });
 *   await scanner.open();
 *   simulator.present(42);        // virtual finger 42 (the synthetic seed) on the sensor
 *
 * `attachSimulator(family, transport, options)` puts a simulator on any device-side transport (the
 * `simulate` command uses it on a pty). Families add themselves to both switches below.
 */
import { AgentError } from '../src/core/errors.js';
import type { Scanner, ScannerFamily } from './scanner.js';
import type { ByteTransport } from './transport/transport.js';
import { createMemoryPair } from './transport/memory-transport.js';
import { seededRandom, type SimImage, type SimImageSource } from './simulator-image.js';
import { R30xScanner, type R30xScannerOptions } from './r30x/scanner.js';
import { R30xSimulator, type R30xModel } from './r30x/simulator.js';
import { Gt521Scanner, type Gt521ScannerOptions } from './gt521/scanner.js';
import { Gt521Simulator, type Gt521Model } from './gt521/simulator.js';
import { IrisHidScanner, type IrisHidScannerOptions } from './iris-hid/scanner.js';
import { IrisHidSimulator, type SimEyeImage } from './iris-hid/simulator.js';
import { HidTransport } from './transport/hid-transport.js';
import { renderFingerImage } from '../src/synthetic/finger-image.js';
import { renderEye } from '../src/synthetic/eye-image.js';
import { ReportId as IrisReportId } from './iris-hid/protocol.js';

/** What every simulator offers its controller (tests, the `simulate` command). */
export interface SimulatorControl {
  readonly family: ScannerFamily;
  /** Puts virtual finger (or eye) `id` on the sensor. */
  present(id: number): void;
  lift(): void;
  /** Fault switches: bad-checksum, dropped-bytes, stall, unplug, no-finger, low-quality. */
  setFault(name: string, value: boolean | number): void;
  /** Stores virtual finger `id` in a module slot directly (set-up for demos and tests). */
  enroll?(slot: number, id: number): void;
  /** Serial simulators: serve again on a new device-side transport (plugged back in after `unplug`). */
  attach?(transport: ByteTransport): Promise<void>;
  close(): Promise<void>;
}

export interface SimulatorOptions {
  baud?: number;
  /** Pace bytes at the baud rate (default: true on a pty, false in-process). */
  pacing?: boolean;
  /** Module model (`R503`, `R307`, ... for r30x). */
  model?: string;
  capacity?: number;
  password?: number;
  imageSource?: SimImageSource;
  hostBaud?: (fresh?: boolean) => number | null;
}

export const SIMULATED_FAMILIES: readonly ScannerFamily[] = ['r30x', 'gt521', 'iris-hid'];

/** A cheap stand-in finger picture (seeded ridge rings), for tests that need no real ridges. */
export function fallbackFingerImage(id: number, impression: number): SimImage {
  const width = 256;
  const height = 288;
  const rnd = seededRandom(id >>> 0);
  const cx = width * (0.4 + 0.2 * rnd());
  const cy = height * (0.4 + 0.2 * rnd());
  const period = 7 + 3 * rnd();
  const jitter = seededRandom((id * 7919 + impression) >>> 0);
  const dx = (jitter() - 0.5) * 12;
  const dy = (jitter() - 0.5) * 12;
  const pixels = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const r = Math.hypot(x - cx - dx, (y - cy - dy) * 0.8);
      const inside = Math.hypot((x - width / 2) / (width * 0.42), (y - height / 2) / (height * 0.45)) < 1;
      pixels[y * width + x] = inside ? Math.round(128 + 110 * Math.sin((2 * Math.PI * r) / period)) : 235;
    }
  }
  return { width, height, pixels };
}

/**
 * The simulators' finger images: the synthetic renderer of src/biometrics (issue 5 keeps the
 * synthetic data there so the simulators can use it). Async for the callers' sake only.
 */
export async function defaultFingerImageSource(): Promise<SimImageSource> {
  return (id, impression) => renderFingerImage(id, impression);
}

/**
 * A cheap stand-in eye (a textured iris disc with a dark pupil on a bright sclera, its circles in
 * `truth`), for tests that need no real iris texture.
 */
export function fallbackEyeImage(eyeId: number, impression: number): SimEyeImage {
  const width = 640;
  const height = 480;
  const iris = { x: 320 + (impression % 5), y: 240, r: 100 };
  const pupil = { x: iris.x, y: iris.y, r: 35 };
  const pixels = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot(x - iris.x, y - iris.y);
      pixels[y * width + x] = d < pupil.r ? 10 : d < iris.r ? 60 + ((x * eyeId + y) % 90) : 200;
    }
  }
  return { width, height, pixels, truth: { pupil, iris } };
}

/** The simulators' eye images: the synthetic eye renderer of src/biometrics at 640×480, with its circles. */
export async function defaultEyeImageSource(): Promise<(eyeId: number, impression: number) => SimEyeImage> {
  return (id, impression) => renderEye(id, impression, { width: 640, height: 480 });
}

/** Puts the family's simulator on a device-side transport (already open or opened by the caller). */
export async function attachSimulator(family: ScannerFamily, transport: ByteTransport, options: SimulatorOptions = {}): Promise<SimulatorControl> {
  switch (family) {
    case 'r30x': {
      const sim = new R30xSimulator(transport, {
        imageSource: options.imageSource ?? (await defaultFingerImageSource()),
        ...(options.baud !== undefined ? { baud: options.baud } : {}),
        ...(options.pacing !== undefined ? { pacing: options.pacing } : {}),
        ...(options.model !== undefined ? { model: options.model as R30xModel } : {}),
        ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
        ...(options.password !== undefined ? { password: options.password } : {}),
        ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}),
      });
      return sim as SimulatorControl & R30xSimulator;
    }
    case 'gt521': {
      const sim = new Gt521Simulator({
        images: options.imageSource ?? (await defaultFingerImageSource()),
        ...(options.baud !== undefined ? { baud: options.baud } : {}),
        ...(options.pacing !== undefined ? { pace: options.pacing } : {}),
        ...(options.model !== undefined ? { model: options.model as Gt521Model } : {}),
        ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}),
      });
      await sim.attach(transport);
      return sim;
    }
    case 'iris-hid':
      throw new AgentError('DRIVER_UNKNOWN_FAMILY', 'the iris simulator is a HID device, not a byte stream: it runs in-process only', { family }, { hint: "use createSimulatedScanner('iris-hid') (edge-agent simulate iris)" });
    default:
      throw new AgentError('DRIVER_UNKNOWN_FAMILY', `no simulator for scanner family "${family}"`, { family }, { hint: `simulated families: ${SIMULATED_FAMILIES.join(', ')}` });
  }
}

export interface SimulatedScanner<S extends SimulatorControl = SimulatorControl> {
  scanner: Scanner;
  simulator: S;
}

/** A scanner of `family` wired in-process to its simulator. The scanner is not opened yet. */
export async function createSimulatedScanner(family: 'r30x', options?: SimulatorOptions & { scanner?: R30xScannerOptions }): Promise<SimulatedScanner<R30xSimulator>>;
export async function createSimulatedScanner(family: 'gt521', options?: SimulatorOptions & { scanner?: Omit<Gt521ScannerOptions, 'transport'> }): Promise<SimulatedScanner<Gt521Simulator>>;
export async function createSimulatedScanner(family: 'iris-hid', options?: SimulatorOptions & { eyeSource?: (eyeId: number, impression: number) => SimEyeImage; scanner?: Omit<IrisHidScannerOptions, 'transport'> }): Promise<SimulatedScanner<IrisHidSimulator>>;
export async function createSimulatedScanner(family: ScannerFamily, options?: SimulatorOptions): Promise<SimulatedScanner>;
export async function createSimulatedScanner(
  family: ScannerFamily,
  options: SimulatorOptions & { eyeSource?: (eyeId: number, impression: number) => SimEyeImage; scanner?: R30xScannerOptions | Omit<Gt521ScannerOptions, 'transport'> | Omit<IrisHidScannerOptions, 'transport'> } = {},
): Promise<SimulatedScanner> {
  if (family === 'iris-hid') {
    // In-process on the HID seam: the simulator is the device node-hid would open.
    const simulator = new IrisHidSimulator({ images: options.eyeSource ?? (await defaultEyeImageSource()), pace: options.pacing ?? false, ...(options.model !== undefined ? { model: options.model } : {}) });
    const transport = new HidTransport({ path: 'sim:iris-hid', open: simulator.opener, inputReportId: IrisReportId.Input });
    return { scanner: new IrisHidScanner({ ...(options.scanner as Omit<IrisHidScannerOptions, 'transport'>), transport }), simulator };
  }
  const { host, device } = createMemoryPair(`sim-${family}`);
  await device.open();
  const simulator = await attachSimulator(family, device, { pacing: false, ...options });
  switch (family) {
    case 'r30x':
      return { scanner: new R30xScanner(host, { baud: options.baud ?? 57600, ...(options.scanner as R30xScannerOptions) }), simulator };
    case 'gt521':
      return { scanner: new Gt521Scanner({ baud: options.baud ?? 9600, ...(options.scanner as Omit<Gt521ScannerOptions, 'transport'>), transport: host }), simulator };
    default:
      throw new AgentError('DRIVER_UNKNOWN_FAMILY', `no simulated scanner for family "${family}"`, { family });
  }
}
