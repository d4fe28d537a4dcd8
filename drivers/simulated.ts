/**
 * Simulated scanners, in-process: the family's byte-exact simulator on the device end (a memory
 * transport pair for serial families, the HID seam for the iris camera) and the real driver on
 * the host end. Everything above the transport is the code that runs against hardware.
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
 * `simulate` command uses it on a pty). Each family's own wiring is its registry entry.
 */
import { AgentError } from '../src/core/errors.js';
import type { ScannerFamily } from './scanner.js';
import type { ByteTransport } from './transport/transport.js';
import type { SimulatorControl, SimulatorOptions } from './simulator/control.js';
import { SCANNER_FAMILIES, familyEntry, type ScannerOptionsOf, type SimulatorOf } from './families.js';
import type { SimulatedScanner } from './family.js';

export type { SimulatorControl, SimulatorOptions } from './simulator/control.js';
export type { SimulatedScanner } from './family.js';

/** Every family has a simulator. */
export const SIMULATED_FAMILIES: readonly ScannerFamily[] = SCANNER_FAMILIES;

/** Puts the family's simulator on a device-side byte transport (already open or opened by it). */
export async function attachSimulator<F extends ScannerFamily>(
  family: F,
  transport: ByteTransport,
  options: SimulatorOptions,
): Promise<SimulatorOf<F>>;
export async function attachSimulator(
  family: ScannerFamily,
  transport: ByteTransport,
  options: SimulatorOptions,
): Promise<SimulatorControl> {
  const entry = familyEntry(family);
  if (!entry.attachSimulator) {
    throw new AgentError(
      'DRIVER_UNKNOWN_FAMILY',
      `the ${family} simulator is a HID device, not a byte stream: it runs in-process only`,
      { family },
      { hint: `use createSimulatedScanner('${family}') (edge-agent simulate iris)` },
    );
  }
  return entry.attachSimulator(transport, options);
}

/** A scanner of `family` wired in-process to its simulator. The scanner is not opened yet. */
export async function createSimulatedScanner<F extends ScannerFamily>(
  family: F,
  options: SimulatorOptions & { scanner?: ScannerOptionsOf<F> },
): Promise<SimulatedScanner<SimulatorOf<F>>>;
export async function createSimulatedScanner(
  family: ScannerFamily,
  options: SimulatorOptions & { scanner?: unknown },
): Promise<SimulatedScanner> {
  return familyEntry(family).simulate(options as SimulatorOptions & { scanner?: object });
}
