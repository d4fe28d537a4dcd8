/**
 * A byte-exact serial badge reader: `present(card)` is a card brought into the reader's field,
 * which sends that card's frame in the configured line format (formats.ts, the codec the reader
 * decodes with) on the shared serial line (simulator/serial.ts: paced at the baud rate on a pty,
 * in-process on a memory pair). An `em4100-hex` reader repeats the frame every 50 ms while the
 * card stays (as RDM6300 modules do) until `lift()`; the others send it once per presentation.
 * It hears nothing the host sends.
 *
 * Fault switches: `garbage` (line noise before the next N frames: a noise line for the line
 * formats, noise bytes glued before the STX of a hex frame), `bad-checksum` (formats that carry
 * one: the XOR checksum, or a Wiegand parity bit, broken; refused for em4100-dec, which has
 * none), `dropped-bytes` (one byte lost from the middle of the next N frames), `stall` (nothing
 * leaves), `unplug` (the cable pulled: now, or after N more bytes).
 *
 * Tested in test/unit/drivers/badge/serial-reader.test.ts (the reader against it over a serial
 * line, every format and fault switch) and test/integration/drivers-badge-pty.test.ts (the same
 * over a socat pty).
 */
import type { ByteTransport } from '../transport/transport.js';
import type { FaultName } from '../simulator/faults.js';
import { SerialSimulator } from '../simulator/serial.js';
import { badgeCodec, type BadgeFormatCodec } from './formats.js';
import { BADGE_SERIAL_DEFAULT_BAUD } from './serial-reader.js';

/** What the garbage fault sends: bytes no reader format takes for a card. */
export const NOISE = Buffer.from([0x78, 0x23, 0xfe, 0x00, 0x3f]);

/** RDM6300 modules repeat a card's frame this often while it stays in the field (ms). */
export const HEX_REPEAT_MS = 50;

export interface BadgeSerialSimulatorOptions {
  format?: string;
  baud?: number;
  pacing?: boolean;
  hostBaud?: (fresh?: boolean) => number | null;
  unplug?: () => void | Promise<void>;
  /** Repeat the frame this often while the card stays (ms; default 50 for em4100-hex, 0 = once for the others). */
  repeatMs?: number;
  /** Wiegand: the bit line (default) or "facility,card". */
  style?: 'bits' | 'pair';
}

export function badgeFaults(codec: BadgeFormatCodec): FaultName[] {
  return ['garbage', ...(codec.checked ? (['bad-checksum'] as const) : []), 'dropped-bytes', 'stall', 'unplug'];
}

export class BadgeSerialSimulator extends SerialSimulator {
  readonly family = 'badge-serial' as const;
  readonly modality = 'badge' as const;
  readonly codec: BadgeFormatCodec;
  /** Frames sent since creation. */
  framesSent = 0;
  readonly #repeatMs: number;
  readonly #style: 'bits' | 'pair';
  #repeat: NodeJS.Timeout | null = null;
  /** Sending noise: no byte fault applies to it. */
  #noise = false;

  constructor(options: BadgeSerialSimulatorOptions = {}) {
    const codec = badgeCodec(options.format);
    super({
      device: 'badge reader',
      baud: options.baud ?? BADGE_SERIAL_DEFAULT_BAUD,
      faults: badgeFaults(codec),
      ...(options.pacing !== undefined ? { pacing: options.pacing } : {}),
      ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}),
      ...(options.unplug ? { unplug: options.unplug } : {}),
    });
    this.codec = codec;
    this.#repeatMs = options.repeatMs ?? (codec.name === 'em4100-hex' ? HEX_REPEAT_MS : 0);
    this.#style = options.style ?? 'bits';
  }

  /** Card `id` (its number, 0 .. 2^bits - 1) comes into the field: its frame is sent. */
  override present(id: number): void {
    this.codec.encode(id); // a number the format cannot carry is refused here, before anything is sent
    super.present(id);
    this.#stopRepeat();
    this.#sendCard(id);
    if (this.#repeatMs > 0) {
      this.#repeat = setInterval(() => {
        const card = this.presented;
        if (card === null) this.#stopRepeat();
        else this.#sendCard(card);
      }, this.#repeatMs);
      this.#repeat.unref?.();
    }
  }

  override lift(): void {
    super.lift();
    this.#stopRepeat();
  }

  #stopRepeat(): void {
    if (this.#repeat) clearInterval(this.#repeat);
    this.#repeat = null;
  }

  #sendCard(id: number): void {
    if (!this.plugged) return;
    this.record('card');
    if (this.faults.take('garbage')) {
      // Noise on its own line for the line formats; glued before the STX for the hex frames.
      this.#noise = true;
      this.send(this.codec.delimiter === '\n' ? Buffer.concat([NOISE, Buffer.from('\r\n')]) : NOISE);
      this.#noise = false;
    }
    const bad = this.codec.checked && this.faults.take('bad-checksum');
    this.send(Buffer.from(this.codec.encode(id, { badChecksum: bad, style: this.#style }), 'latin1'));
    this.framesSent++;
  }

  /** The dropped-bytes fault: one byte out of the middle (a checksum is broken when the frame is made). */
  protected override damage(frame: Uint8Array): Buffer {
    const out = Buffer.from(frame);
    if (this.#noise || !this.faults.take('dropped-bytes')) return out;
    const mid = out.length >> 1;
    return Buffer.concat([out.subarray(0, mid), out.subarray(mid + 1)]);
  }

  /** A reader hears nothing. */
  protected receive(): void {}

  /** Nothing kept in RAM but the card in the field. */
  protected powerUp(): void {}

  override async close(): Promise<void> {
    this.#stopRepeat();
    await super.close();
  }

  /** Attaches to the device end of a transport (what `attachSimulator` and the `simulate` command do). */
  static async on(transport: ByteTransport, options: BadgeSerialSimulatorOptions): Promise<BadgeSerialSimulator> {
    const sim = new BadgeSerialSimulator(options);
    await sim.attach(transport);
    return sim;
  }
}
