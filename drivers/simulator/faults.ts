/**
 * The fault switches every simulator has, by the names the `simulate` command and the tests use:
 *
 *   bad-checksum   the next N frames (true: every frame) leave with a broken checksum
 *   dropped-bytes  the next N frames (true: every frame) lose bytes on the way
 *   stall          the device reads but answers nothing, and what it was sending waits
 *   unplug         true: the cable is pulled now; a number: after that many more bytes sent
 *                  (whole input reports for a HID device); false: not any more
 *   no-finger      the sensor sees nothing, whatever is presented (no-eye for a camera)
 *   low-quality    captures are poor: noisy images, failed enrolments, no matches
 *   garbage        the next N frames (true: every frame) come after line noise (badge readers)
 *
 * A simulator says which of them it has (`faults`): the fingerprint modules and the camera have
 * all but garbage, a badge reader has no finger and no image quality to spoil.
 * The switches are data plus their plumbing (names, counts, the unknown-name error); what a
 * fault does to a frame is the simulator's (a checksum at the end of a packet, a CRC at the end
 * of an image message), through `take` and `damageFrame`.
 *
 * Tested in test/unit/drivers/simulated.test.ts (switches by name, an unknown name refused),
 * test/unit/drivers/r30x/scanner.test.ts (bad checksum, dropped bytes, stall, low quality) and
 * test/unit/drivers/badge/serial-reader.test.ts (garbage, unplug and replug).
 */
import { AgentError } from '../../src/core/errors.js';

export const FAULT_NAMES = ['bad-checksum', 'dropped-bytes', 'stall', 'unplug', 'no-finger', 'low-quality', 'garbage'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

/** The faults of a scanner simulator (everything but line garbage). */
export const SCANNER_FAULTS: readonly FaultName[] = ['bad-checksum', 'dropped-bytes', 'stall', 'unplug', 'no-finger', 'low-quality'];

export interface FaultSwitchesOptions {
  /** How errors call the device ("GT-521", "iris camera"). */
  device: string;
  /** The faults this simulator has (default SCANNER_FAULTS); others are refused by name. */
  faults?: readonly FaultName[];
  /** Other names a family accepts (the camera's `no-eye` for `no-finger`). */
  aliases?: Readonly<Record<string, FaultName>>;
  /** Pulls the cable (the `unplug` fault switched on). */
  unplug(): void;
  /** The stall switch changed (a simulator holds or releases its output). */
  onStall?(on: boolean): void;
}

export class FaultSwitches {
  /** Frames still to send with a broken checksum (Infinity: all). */
  badChecksum = 0;
  /** Frames still to send with bytes missing (Infinity: all). */
  droppedBytes = 0;
  stall = false;
  /** The sensor sees nothing (no finger, no eye). */
  noFinger = false;
  lowQuality = false;
  /** Pull the cable once this many more bytes have been sent (null: never). */
  unplugAfterBytes: number | null = null;
  /** Frames still to send after line noise (Infinity: all). */
  garbage = 0;
  readonly #options: FaultSwitchesOptions;

  constructor(options: FaultSwitchesOptions) {
    this.#options = options;
  }

  /** The names this simulator takes. */
  get names(): string[] {
    return [...this.#faults(), ...Object.keys(this.#options.aliases ?? {})];
  }

  #faults(): readonly FaultName[] {
    return this.#options.faults ?? SCANNER_FAULTS;
  }

  /** `true`/`false` switches a fault; a number counts frames (checksum, bytes) or bytes before an unplug. */
  set(name: string, value: boolean | number): void {
    const fault = (this.#faults() as readonly string[]).includes(name) ? (name as FaultName) : this.#options.aliases?.[name];
    if (!fault) {
      throw new AgentError(
        'DRIVER_SIM_UNKNOWN_FAULT',
        `unknown ${this.#options.device} simulator fault "${name}"`,
        { fault: name },
        { hint: `faults: ${this.names.join(', ')}` },
      );
    }
    const count = value === true ? Number.POSITIVE_INFINITY : value === false ? 0 : value;
    switch (fault) {
      case 'bad-checksum':
        this.badChecksum = count;
        return;
      case 'dropped-bytes':
        this.droppedBytes = count;
        return;
      case 'stall':
        this.stall = Boolean(value);
        this.#options.onStall?.(this.stall);
        return;
      case 'no-finger':
        this.noFinger = Boolean(value);
        return;
      case 'low-quality':
        this.lowQuality = Boolean(value);
        return;
      case 'garbage':
        this.garbage = count;
        return;
      case 'unplug':
        if (value === true) this.#options.unplug();
        else this.unplugAfterBytes = value === false ? null : value;
        return;
    }
  }

  /** True when the fault applies to this frame; counts a numbered fault down. */
  take(fault: 'bad-checksum' | 'dropped-bytes' | 'garbage'): boolean {
    const key = fault === 'bad-checksum' ? 'badChecksum' : fault === 'dropped-bytes' ? 'droppedBytes' : 'garbage';
    if (this[key] <= 0) return false;
    this[key]--;
    return true;
  }

  /** What is switched on, by name (for a status line). */
  snapshot(): Record<string, number | boolean> {
    const on: Record<string, number | boolean> = {};
    if (this.badChecksum) on['bad-checksum'] = this.badChecksum === Number.POSITIVE_INFINITY ? true : this.badChecksum;
    if (this.droppedBytes) on['dropped-bytes'] = this.droppedBytes === Number.POSITIVE_INFINITY ? true : this.droppedBytes;
    if (this.stall) on.stall = true;
    if (this.unplugAfterBytes !== null) on.unplug = this.unplugAfterBytes;
    if (this.noFinger) on['no-finger'] = true;
    if (this.lowQuality) on['low-quality'] = true;
    if (this.garbage) on.garbage = this.garbage === Number.POSITIVE_INFINITY ? true : this.garbage;
    return on;
  }
}

/**
 * One outgoing frame as the armed faults leave it: the last byte (the checksum's) flipped, and
 * `dropCount` bytes missing from its middle.
 */
export function damageFrame(frame: Uint8Array, faults: FaultSwitches, dropCount: number): Buffer {
  let out = Buffer.from(frame);
  if (faults.take('bad-checksum')) out[out.length - 1]! ^= 0x5a;
  if (faults.take('dropped-bytes')) {
    const mid = out.length >> 1;
    out = Buffer.concat([out.subarray(0, mid), out.subarray(mid + dropCount)]);
  }
  return out;
}
