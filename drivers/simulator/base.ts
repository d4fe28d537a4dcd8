/**
 * What every simulator keeps the same way: the virtual finger or eye in front of the sensor and
 * how many times each was captured, the fault switches (faults.ts), the log of commands received,
 * and the pictures from the injected image source fitted to the sensor (degraded under the
 * low-quality fault). Families extend it (serial.ts adds the byte line) and speak their protocol.
 *
 * Tested in test/unit/drivers/gt521/driver.test.ts and test/unit/drivers/iris-hid/driver.test.ts
 * (presence, impressions, fault switches and degraded pictures, through the simulators that extend
 * it).
 */
import type { ScannerModality } from '../../src/core/modality.js';
import type { ScannerFamily } from '../scanner.js';
import type { SimulatorControl } from './control.js';
import { FaultSwitches, type FaultSwitchesOptions } from './faults.js';
import { degradeImage, fitImage, type SimImage } from './images.js';

/** Command names kept in `received`. */
export const RECEIVED_KEPT = 1000;

/** Pictures kept ready (a capture and its upload, a preview repeated while the finger stays). */
const PICTURES_KEPT = 8;

export abstract class SimulatorBase implements SimulatorControl {
  abstract readonly family: ScannerFamily;
  abstract readonly modality: ScannerModality;
  readonly faults: FaultSwitches;
  /** The last commands received, by name, oldest first (for tests and the CLI). */
  readonly received: string[] = [];
  #presented: number | null = null;
  #impressions = new Map<number, number>();
  #pictures = new Map<string, Uint8Array>();

  constructor(faults: Omit<FaultSwitchesOptions, 'unplug'>) {
    this.faults = new FaultSwitches({ ...faults, unplug: () => this.unplug() });
  }

  /** Puts virtual finger (or eye) `id` in front of the sensor. */
  present(id: number): void {
    this.#presented = id;
  }

  lift(): void {
    this.#presented = null;
  }

  /** What the sensor sees: the presented finger or eye, or null (none, or the no-finger fault). */
  get presented(): number | null {
    return this.faults.noFinger ? null : this.#presented;
  }

  setFault(name: string, value: boolean | number): void {
    this.faults.set(name, value);
  }

  /** Pulls the cable: the host sees the device go away. */
  abstract unplug(): void | Promise<void>;

  abstract close(): Promise<void>;

  /** Counts a capture of `id` and says which one it is (1, 2, ...). */
  protected nextImpression(id: number): number {
    const n = (this.#impressions.get(id) ?? 0) + 1;
    this.#impressions.set(id, n);
    return n;
  }

  /** Captures of `id` so far. */
  protected impressions(id: number): number {
    return this.#impressions.get(id) ?? 0;
  }

  /** Keeps the last RECEIVED_KEPT command names (a long-running simulator must not grow). */
  protected record(name: string): void {
    this.received.push(name);
    if (this.received.length > RECEIVED_KEPT) this.received.splice(0, this.received.length - RECEIVED_KEPT);
  }

  /**
   * The picture of `id`'s capture `impression` from `source`, fitted to `width` × `height` and,
   * when `poor`, degraded like a bad capture. Kept for a while: the same capture is asked again.
   */
  protected picture(
    source: (id: number, impression: number) => SimImage,
    id: number,
    impression: number,
    width: number,
    height: number,
    poor: boolean,
  ): Uint8Array {
    const key = `${id}/${impression}/${poor}/${width}x${height}`;
    let pixels = this.#pictures.get(key);
    if (!pixels) {
      pixels = fitImage(source(id, impression), width, height);
      if (poor) pixels = degradeImage(pixels, id ^ impression);
      if (this.#pictures.size >= PICTURES_KEPT) this.#pictures.clear();
      this.#pictures.set(key, pixels);
    }
    return pixels;
  }
}
