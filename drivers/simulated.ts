/**
 * Simulated scanners, in-process: a memory transport pair with the family's byte-exact simulator
 * on the device end and the real driver on the host end. Everything above the transport is the
 * code that runs against hardware.
 *
 *   const { scanner, simulator } = await createSimulatedScanner('r30x', { images: syntheticImages });
 *   await scanner.open();
 *   simulator.present(42);        // virtual finger 42 (the synthetic seed) on the sensor
 *
 * The images come from the caller (`images`): drivers/ knows no renderer. The CLI, the daemon and
 * the tests wire `src/synthetic/simulator-sources.ts` in, or `fallbackImages` where no real
 * ridges are needed.
 *
 * `attachSimulator(family, transport, options)` puts a simulator on any device-side transport (the
 * `simulate` command uses it on a pty). Families add themselves to both switches below.
 */
import { AgentError } from '../src/core/errors.js';
import type { Scanner, ScannerFamily } from './scanner.js';
import type { ByteTransport } from './transport/transport.js';
import { createMemoryPair } from './transport/memory-transport.js';
import type { SimulatorControl, SimulatorOptions } from './simulator/control.js';
import { R30xScanner, type R30xScannerOptions } from './r30x/scanner.js';
import { R30xSimulator, type R30xModel } from './r30x/simulator.js';
import { Gt521Scanner, type Gt521ScannerOptions } from './gt521/scanner.js';
import { Gt521Simulator, type Gt521Model } from './gt521/simulator.js';
import { IrisHidScanner, type IrisHidScannerOptions } from './iris-hid/scanner.js';
import { IrisHidSimulator } from './iris-hid/simulator.js';
import { HidTransport } from './transport/hid-transport.js';
import { ReportId as IrisReportId } from './iris-hid/protocol.js';

export type { SimulatorControl, SimulatorOptions } from './simulator/control.js';

export const SIMULATED_FAMILIES: readonly ScannerFamily[] = ['r30x', 'gt521', 'iris-hid'];

/** Puts the family's simulator on a device-side transport (already open or opened by the caller). */
export async function attachSimulator(family: ScannerFamily, transport: ByteTransport, options: SimulatorOptions): Promise<SimulatorControl> {
  switch (family) {
    case 'r30x': {
      const sim = new R30xSimulator(transport, {
        imageSource: options.images.finger,
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
        images: options.images.finger,
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
export async function createSimulatedScanner(family: 'r30x', options: SimulatorOptions & { scanner?: R30xScannerOptions }): Promise<SimulatedScanner<R30xSimulator>>;
export async function createSimulatedScanner(family: 'gt521', options: SimulatorOptions & { scanner?: Omit<Gt521ScannerOptions, 'transport'> }): Promise<SimulatedScanner<Gt521Simulator>>;
export async function createSimulatedScanner(family: 'iris-hid', options: SimulatorOptions & { scanner?: Omit<IrisHidScannerOptions, 'transport'> }): Promise<SimulatedScanner<IrisHidSimulator>>;
export async function createSimulatedScanner(family: ScannerFamily, options: SimulatorOptions): Promise<SimulatedScanner>;
export async function createSimulatedScanner(
  family: ScannerFamily,
  options: SimulatorOptions & { scanner?: R30xScannerOptions | Omit<Gt521ScannerOptions, 'transport'> | Omit<IrisHidScannerOptions, 'transport'> },
): Promise<SimulatedScanner> {
  if (family === 'iris-hid') {
    // In-process on the HID seam: the simulator is the device node-hid would open.
    const simulator = new IrisHidSimulator({ images: options.images.iris, pace: options.pacing ?? false, ...(options.model !== undefined ? { model: options.model } : {}) });
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
