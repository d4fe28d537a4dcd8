/**
 * A USB keyboard-wedge badge reader on the HID seam (the device node-hid would open; this kernel
 * has no /dev/uhid): `present(card)` types the card's line in the configured format
 * (formats.ts) as boot-keyboard reports (keyboard.ts), each key pressed and released, one report
 * every `reportIntervalMs` (default 4 ms; `pace: false` sends them at once). The reader's
 * `simulator.opener` is what HidTransport opens.
 *
 * Fault switches: `garbage` (a line of noise keys typed before the next N cards), `bad-checksum`
 * (Wiegand bit lines: a parity bit broken; refused for em4100-dec), `dropped-bytes` (a key press
 * lost from the middle of the next N lines), `stall` (reports held until released), `unplug`
 * (the device disappears: the open handle's read fails, opening fails until `replug()`).
 *
 * Tested in test/unit/drivers/badge/hid-reader.test.ts (the reader reads what it types, with each
 * fault switch).
 */
import { EventEmitter } from 'node:events';
import { logger } from '../../src/core/logger.js';
import type { HidDeviceHandle, HidOpener } from '../transport/hid-transport.js';
import { SimulatorBase } from '../simulator/base.js';
import { badgeCodec, type BadgeFormatCodec } from './formats.js';
import { typeText } from './keyboard.js';
import { badgeFaults } from './serial-simulator.js';

const log = logger('drivers:badge-hid-sim');

/** The noise the garbage fault types on its own line. */
export const NOISE_KEYS = 'x#q;\n';

export interface BadgeHidSimulatorOptions {
  format?: string;
  /** Pace the reports (default true); false sends them at once. */
  pace?: boolean;
  reportIntervalMs?: number;
  style?: 'bits' | 'pair';
}

class SimKeyboardHandle extends EventEmitter implements HidDeviceHandle {
  constructor(private readonly sim: BadgeHidSimulator) {
    super();
  }

  /** Keyboard LED output reports: taken and ignored (the reader has no light the host drives). */
  async write(values: number[] | Buffer): Promise<number> {
    this.sim.usable(this);
    return Buffer.from(values).length;
  }

  async sendFeatureReport(): Promise<number> {
    this.sim.usable(this);
    throw new Error('the keyboard has no feature reports');
  }

  async getFeatureReport(): Promise<Buffer> {
    this.sim.usable(this);
    throw new Error('the keyboard has no feature reports');
  }

  async close(): Promise<void> {
    this.sim.hostClose(this);
  }
}

export class BadgeHidSimulator extends SimulatorBase {
  readonly family = 'badge-hid' as const;
  readonly modality = 'badge' as const;
  readonly codec: BadgeFormatCodec;
  readonly pace: boolean;
  readonly reportIntervalMs: number;
  reportsSent = 0;
  readonly #style: 'bits' | 'pair';
  #handle: SimKeyboardHandle | null = null;
  #unplugged = false;
  #outbox: Buffer[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(options: BadgeHidSimulatorOptions = {}) {
    const codec = badgeCodec(options.format, { keyboard: true });
    super({ device: 'keyboard-wedge badge reader', faults: badgeFaults(codec), onStall: (on) => !on && this.#schedule() });
    this.codec = codec;
    this.pace = options.pace ?? true;
    this.reportIntervalMs = options.reportIntervalMs ?? 4;
    this.#style = options.style ?? 'bits';
  }

  /** Opens the simulated device (give it to HidTransport as `open`). */
  readonly opener: HidOpener = async (path: string) => {
    if (this.#unplugged) throw new Error(`cannot open device with path ${path}`);
    const handle = new SimKeyboardHandle(this);
    this.#handle = handle;
    return handle;
  };

  get plugged(): boolean {
    return !this.#unplugged;
  }

  /** Card `id` is held to the reader: its line is typed. */
  override present(id: number): void {
    this.codec.encode(id);
    super.present(id);
    if (this.#unplugged) return;
    this.record('card');
    let text = '';
    if (this.faults.take('garbage')) text += NOISE_KEYS;
    const bad = this.codec.checked && this.faults.take('bad-checksum');
    let reports = typeText(this.codec.encode(id, { badChecksum: bad, style: this.#style }));
    if (this.faults.take('dropped-bytes')) {
      // Lose one key press from the middle (its release report stays: an all-zero report).
      const press = (reports.length >> 2) * 2;
      reports = reports.filter((_, i) => i !== press);
    }
    this.#outbox.push(...typeText(text), ...reports);
    this.#schedule();
  }

  /** The device disappears: the open handle's read loop fails, opening fails until `replug()`. */
  unplug(): void {
    if (this.#unplugged) return;
    this.#unplugged = true;
    this.#outbox = [];
    const h = this.#handle;
    this.#handle = null;
    log.info('simulated keyboard-wedge reader unplugged');
    if (h) setImmediate(() => h.emit('error', new Error('could not read from HID device')));
  }

  replug(): void {
    this.#unplugged = false;
  }

  async close(): Promise<void> {
    this.#outbox = [];
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#handle = null;
  }

  /** @internal the handle's calls: fail once the device is gone. */
  usable(h: SimKeyboardHandle): void {
    if (this.#unplugged || this.#handle !== h) throw new Error('could not write to HID device');
  }

  /** @internal */
  hostClose(h: SimKeyboardHandle): void {
    if (this.#handle === h) this.#handle = null;
  }

  #schedule(): void {
    if (this.#timer || this.faults.stall || this.#outbox.length === 0) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#pump();
      },
      this.pace ? this.reportIntervalMs : 0,
    );
  }

  #pump(): void {
    const h = this.#handle;
    if (this.faults.stall || this.#unplugged) return;
    const batch = this.pace ? this.#outbox.splice(0, 1) : this.#outbox.splice(0);
    for (const report of batch) {
      // Nobody has the device open: the keys go nowhere (as typed into a closed hidraw node).
      if (h && this.#handle === h) h.emit('data', report);
      this.reportsSent++;
      const left = this.faults.unplugAfterBytes;
      if (left !== null) {
        this.faults.unplugAfterBytes = left - report.length > 0 ? left - report.length : null;
        if (this.faults.unplugAfterBytes === null) {
          this.unplug();
          return;
        }
      }
    }
    this.#schedule();
  }
}
