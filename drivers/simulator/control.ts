/**
 * What every simulator offers its controller (tests, the `simulate` command, the embedded demo),
 * and the options a simulator is made with. Kept apart from the simulators and from their
 * factory (simulated.ts) so neither imports the other.
 *
 * Types only. Tested in test/unit/drivers/simulated.test.ts (simulators made and controlled through
 * it: present, enroll, setFault).
 */
import type { ScannerModality } from '../../src/core/modality.js';
import type { ScannerFamily } from '../scanner.js';
import type { ByteTransport } from '../transport/transport.js';
import type { SimulatorImages } from './images.js';

export interface SimulatorControl {
  readonly family: ScannerFamily;
  readonly modality: ScannerModality;
  /** Puts virtual finger (or eye) `id` on the sensor; for a badge reader, card number `id` in its field. */
  present(id: number): void;
  lift(): void;
  /** Fault switches: bad-checksum, dropped-bytes, stall, unplug, no-finger, low-quality (garbage for badge readers). */
  setFault(name: string, value: boolean | number): void;
  /** Stores virtual finger `id` in a module slot directly (set-up for demos and tests). */
  enroll?(slot: number, id: number): void;
  /** Serial simulators: serve again on a new device-side transport (plugged back in after `unplug`). */
  attach?(transport: ByteTransport): Promise<void>;
  close(): Promise<void>;
}

export interface SimulatorOptions {
  /**
   * The pictures the simulator sends, one source per modality. Required: `drivers/` has no
   * renderer of its own. `src/synthetic/simulator-sources.ts` gives the synthetic ones;
   * `fallbackImages` (simulator/images.ts) cheap stand-ins.
   */
  images: SimulatorImages;
  baud?: number;
  /** Pace bytes at the baud rate (default: true on a pty, false in-process). */
  pacing?: boolean;
  /** Module model (`R503`, `R307`, ... for r30x). */
  model?: string;
  /** Badge readers: the line format the reader sends (drivers/badge/formats.ts). */
  format?: string;
  capacity?: number;
  password?: number;
  /** The host side's line speed where it can be read (a pty); `fresh` asks to read it again. */
  hostBaud?: (fresh?: boolean) => number | null;
}
