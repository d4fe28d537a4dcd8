/**
 * The byte line every serial module simulator sits on, written once: the device end of any
 * ByteTransport (the memory pair in-process, a SerialTransport on a socat pty), output paced at
 * the baud rate (LinePacer), commands handled one at a time and never before their last byte
 * would have arrived, deaf to a host talking at another speed, and the byte-level faults
 * (checksum, dropped bytes, stall, unplug now or after N bytes). A family's simulator parses
 * what `receive` hands it and answers with `send`.
 *
 * `attach(transport)` plugs the module in (again, after an unplug: its flash is kept, its RAM is
 * lost, like a power cycle).
 *
 * Tested in test/unit/drivers/r30x/r30x-serial.test.ts and
 * test/unit/drivers/gt521/gt521-serial.test.ts (paced output, a module deaf at another baud rate,
 * unplug after N bytes), through the serial simulators.
 */
import { logger } from '../../src/core/logger.js';
import { sleep } from '../../src/core/time.js';
import { LinePacer } from '../transport/line-pacer.js';
import type { ByteTransport } from '../transport/transport.js';
import { SimulatorBase } from './base.js';
import { damageFrame, type FaultName } from './faults.js';

const log = logger('drivers:simulator');

export interface SerialSimulatorOptions {
  /** The module's line speed at power-up. */
  baud: number;
  /** Pace output at the baud rate (default true); false answers at once (fast in-process tests). */
  pacing?: boolean;
  /**
   * The host side's line speed where it can be read (a pty), `fresh` to read it again rather
   * than from a cache; when it differs from the module's the module hears only noise.
   */
  hostBaud?: (fresh?: boolean) => number | null;
  /** How to pull the cable (default: close the device transport). */
  unplug?: () => void | Promise<void>;
  /** The fault switches this device has (default: a scanner's, faults.ts). */
  faults?: readonly FaultName[];
}

export abstract class SerialSimulator extends SimulatorBase {
  #baud: number;
  readonly #pacing: boolean;
  readonly #hostBaud: ((fresh?: boolean) => number | null) | undefined;
  readonly #pullCable: (() => void | Promise<void>) | undefined;
  #transport: ByteTransport | null = null;
  #pacer: LinePacer | null = null;
  #work: Promise<void> = Promise.resolve();
  #unplugged = false;
  /** Read the host's speed afresh on the next input (first input, after a baud change, a replug). */
  #freshHostBaud = true;

  /** @param dropCount bytes the dropped-bytes fault takes out of a frame */
  constructor(
    options: SerialSimulatorOptions & { device: string },
    readonly dropCount = 1,
  ) {
    super({
      device: options.device,
      ...(options.faults ? { faults: options.faults } : {}),
      onStall: (on) => {
        if (this.#pacer) this.#pacer.stalled = on;
      },
    });
    this.#baud = options.baud;
    this.#pacing = options.pacing ?? true;
    this.#hostBaud = options.hostBaud;
    this.#pullCable = options.unplug;
  }

  get baud(): number {
    return this.#baud;
  }

  /** The module is on a line (attached and not unplugged). */
  get plugged(): boolean {
    return this.#transport !== null && !this.#unplugged;
  }

  /** Parses bytes from the host; answers go out through `later` and `send`. */
  protected abstract receive(chunk: Buffer, readyAt: number): void;

  /** The module lost power: forget what it keeps in RAM (buffers, sessions). Flash stays. */
  protected abstract powerUp(): void;

  /** Serves on the device end of `transport` (opened when needed); after an unplug, a replug. */
  async attach(transport: ByteTransport): Promise<void> {
    this.#pacer?.clear();
    this.#transport = transport;
    const pacer = new LinePacer(transport, { baud: this.#baud, enabled: this.#pacing });
    pacer.stalled = this.faults.stall;
    pacer.onError = (err) => log.debug({ err: String(err) }, 'simulator write failed');
    this.#pacer = pacer;
    this.#unplugged = false;
    this.#freshHostBaud = true;
    this.faults.unplugAfterBytes = null;
    this.powerUp();
    transport.on('data', (chunk) => {
      if (this.#transport !== transport || this.#unplugged) return;
      const readyAt = pacer.arrival(chunk.length);
      if (this.#hostBaud) {
        const host = this.#hostBaud(this.#freshHostBaud);
        this.#freshHostBaud = false;
        if (host !== null && host !== this.#baud) return; // wrong speed: the module hears noise
      }
      this.receive(chunk, readyAt);
    });
    if (!transport.isOpen) await transport.open();
  }

  /**
   * Runs `handle` after everything received before, no earlier than `readyAt` (when the
   * command's last byte would have arrived; timers round down, hence the ceiling). Nothing is
   * answered while the module stalls or is unplugged.
   */
  protected later(readyAt: number, handle: () => void | Promise<void>): void {
    this.#work = this.#work
      .then(async () => {
        const wait = readyAt - performance.now();
        if (wait > 0) await sleep(Math.ceil(wait));
        if (!this.#unplugged && !this.faults.stall) await handle();
      })
      .catch((err: unknown) => log.warn({ err: String(err) }, 'simulator could not answer'));
  }

  /**
   * Sends one frame as the faults leave it (checksum broken, bytes dropped, the cable pulled
   * part way). Queued on the line clock, not awaited: an answer and its data leave back to back.
   */
  protected send(frame: Uint8Array): void {
    const pacer = this.#pacer;
    if (!pacer || this.#unplugged) return;
    const out = this.damage(frame);
    const cutAfter = this.faults.unplugAfterBytes;
    if (cutAfter !== null && cutAfter <= out.length) {
      this.faults.unplugAfterBytes = null;
      pacer.send(out.subarray(0, cutAfter));
      void pacer.idle().then(() => this.unplug());
      return;
    }
    if (cutAfter !== null) this.faults.unplugAfterBytes = cutAfter - out.length;
    pacer.send(out);
  }

  /**
   * One frame as the armed byte faults leave it (default: the last byte, a checksum's, flipped;
   * `dropCount` bytes out of its middle). A family whose checksum is not the last byte says how.
   */
  protected damage(frame: Uint8Array): Buffer {
    return damageFrame(frame, this.faults, this.dropCount);
  }

  /** Switches the module's line speed once what it is sending has left (a baud-change command). */
  protected async switchBaud(baud: number): Promise<void> {
    await this.#pacer?.idle();
    this.#baud = baud;
    this.#freshHostBaud = true;
    if (this.#pacer) this.#pacer.baud = baud;
  }

  /** Pulls the cable: the host sees a disconnect. */
  async unplug(): Promise<void> {
    if (this.#unplugged) return;
    this.#unplugged = true;
    this.#pacer?.clear();
    log.info({ family: this.family }, 'simulated unplug');
    if (this.#pullCable) await this.#pullCable();
    else await this.#transport?.close();
  }

  /** Stops serving (the device transport is closed). */
  async close(): Promise<void> {
    this.#unplugged = true;
    this.#pacer?.clear();
    const t = this.#transport;
    this.#transport = null;
    if (t) await t.close();
  }
}
