/**
 * A byte-exact GT-521F32/F52 simulator. It sits on the device end of any ByteTransport (the
 * `device` end of a memory pair, or a SerialTransport on one side of a socat pty pair), parses the
 * host's packets with the same parser the driver uses, and answers the way the module does, at
 * the speed the baud rate allows.
 *
 * Virtual fingers are numbers (the synthetic seed). `placeFinger(id)` puts one on the sensor;
 * captures make images from the injected image source and templates in the simulator's own
 * 498-byte layout (sim-template.ts), so Verify, Identify, the duplicate check and template
 * upload/download behave like the module.
 *
 * Where the programming guide says nothing, the simulator chooses (and the README records):
 * a command that needs a captured finger when none was captured gets NACK_FINGER_IS_NOT_PRESSED;
 * IsPressFinger answers 0 for pressed and 0x1012 for not pressed; an unknown command gets
 * NACK_IS_NOT_SUPPORTED; a command packet with a bad checksum is ignored (the host times out and
 * retries); host data with a bad checksum gets NACK_COMM_ERR.
 */
import { logger } from '../../src/core/logger.js';
import { sleep } from '../../src/core/time.js';
import type { ByteTransport } from '../transport/transport.js';
import { LinePacer } from '../transport/line-pacer.js';
import type { SimulatorControl } from '../simulator/control.js';
import { degradeImage, fitImage, type SimImageSource } from '../simulator/images.js';
import { encodeData, encodePacket, type Gt521DataPacket, type Gt521Packet } from './codec.js';
import { encodeDeviceInfo } from './driver.js';
import { Gt521Parser } from './parser.js';
import {
  ACK,
  BAUD_RATES,
  DEFAULT_BAUD,
  DEFAULT_DEVICE_ID,
  ENROLL_NO_SAVE,
  Gt521Command as C,
  IMAGE_HEIGHT,
  IMAGE_WIDTH,
  MODELS,
  NACK,
  NackCode,
  RAW_IMAGE_HEIGHT,
  RAW_IMAGE_WIDTH,
  SET_TEMPLATE_NO_DUP_CHECK,
  TEMPLATE_SIZE,
} from './protocol.js';
import { decodeSimTemplate, encodeSimTemplate, simTemplatesMatch, type SimTemplateInfo } from './sim-template.js';

/** Command names kept in `received`. */
export const RECEIVED_KEPT = 1000;

const log = logger('drivers:gt521-sim');

export type Gt521Model = (typeof MODELS)[number]['model'];

export const GT521_FAULT_NAMES = ['bad-checksum', 'dropped-bytes', 'stall', 'unplug', 'no-finger', 'low-quality'] as const;

export interface Gt521Faults {
  /** Corrupt the checksum of the next N frames sent (Infinity: all). */
  badChecksum: number;
  /** Drop 3 bytes from the middle of each of the next N frames sent (Infinity: all). */
  dropBytes: number;
  /** Read commands but answer nothing. */
  stall: boolean;
  /** Unplug after sending this many more bytes (null: never). */
  unplugAfterBytes: number | null;
  /** The sensor sees no finger, whatever is placed. */
  noFinger: boolean;
  /** Captures are poor: enrolment fails with NACK_BAD_FINGER, nothing matches, images are noise. */
  lowQuality: boolean;
}

export interface Gt521SimulatorOptions {
  model?: Gt521Model;
  /** Initial line speed (default 9600); ChangeBaud switches it. */
  baud?: number;
  /** Pace output at the baud rate (default true). */
  pace?: boolean;
  firmwareVersion?: number;
  isoAreaMaxSize?: number;
  serialNumber?: Uint8Array;
  deviceId?: number;
  /** Finger images: `(fingerId, impression) => image`. */
  images: SimImageSource;
  /** How to pull the cable (default: close the device transport). */
  unplug?: () => void | Promise<void>;
  /**
   * The host's line speed (`fresh`: read it again now, not from a cache); when it differs from the
   * module's, the module hears only noise.
   */
  hostBaud?: (fresh?: boolean) => number | null;
}

interface Capture extends SimTemplateInfo {
  best: boolean;
  /** Consumed by an enrolment step. */
  used: boolean;
  /** The 258×202 image, made when the finger was captured (as the module does), sent by GetImage. */
  pixels: Uint8Array;
}

interface Enrolment {
  slot: number | null;
  step: number;
  fingerId: number | null;
  quality: number;
}

export class Gt521Simulator implements SimulatorControl {
  readonly family = 'gt521' as const;
  readonly modality = 'finger' as const;
  readonly model: Gt521Model;
  readonly capacity: number;
  readonly faults: Gt521Faults = { badChecksum: 0, dropBytes: 0, stall: false, unplugAfterBytes: null, noFinger: false, lowQuality: false };
  /** Slot → template (the module's flash). */
  readonly slots = new Map<number, Buffer>();
  /** The last commands received, by name (for tests and the CLI). */
  readonly received: string[] = [];
  led = false;
  firmwareVersion: number;
  isoAreaMaxSize: number;
  serialNumber: Buffer;

  readonly #images: SimImageSource;
  readonly #deviceId: number;
  readonly #pace: boolean;
  #baud: number;
  #transport: ByteTransport | null = null;
  #pacer: LinePacer | null = null;
  readonly #hostBaud: ((fresh?: boolean) => number | null) | undefined;
  /** Read the host's speed afresh on the next input (after a baud change). */
  #refreshHostBaud = true;
  /** When the last byte received so far would have arrived on a real line. */
  #rxReadyAt = 0;
  #parser: Gt521Parser;
  #finger: number | null = null;
  #impressions = new Map<number, number>();
  #capture: Capture | null = null;
  /** The last image made (GetRawImage previews repeat it while the finger stays). */
  #lastImage: { key: string; pixels: Uint8Array } | null = null;
  #enrol: Enrolment | null = null;
  /** Waiting for the host's data packet after ACKing this command. */
  #awaiting: { command: number; parameter: number } | null = null;
  #queue: Promise<void> = Promise.resolve();
  #unplug: (() => void | Promise<void>) | undefined;
  #unplugged = false;

  constructor(options: Gt521SimulatorOptions) {
    this.model = options.model ?? 'GT-521F52';
    this.capacity = MODELS.find((m) => m.model === this.model)!.capacity;
    this.#baud = options.baud ?? DEFAULT_BAUD;
    this.#pace = options.pace ?? true;
    this.firmwareVersion = options.firmwareVersion ?? 0x20150930;
    this.isoAreaMaxSize = options.isoAreaMaxSize ?? 0x1c000;
    this.serialNumber = Buffer.from(options.serialNumber ?? Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
    this.#deviceId = options.deviceId ?? DEFAULT_DEVICE_ID;
    this.#images = options.images;
    this.#unplug = options.unplug;
    this.#hostBaud = options.hostBaud;
    this.#parser = new Gt521Parser({
      packet: (p) => this.#enqueueAt(this.#rxReadyAt, () => this.#onPacket(p)),
      data: (d) => this.#enqueueAt(this.#rxReadyAt, () => this.#onData(d)),
      error: () => {
        if (this.#awaiting) {
          this.#awaiting = null;
          this.#parser.expectedDataLength = null;
          this.#enqueue(() => this.#nack(NackCode.CommErr));
        }
      },
    });
  }

  /** Keeps the last RECEIVED_KEPT command names (a long-running simulator must not grow). */
  #record(name: string): void {
    this.received.push(name);
    if (this.received.length > RECEIVED_KEPT) this.received.splice(0, this.received.length - RECEIVED_KEPT);
  }

  get baud(): number {
    return this.#baud;
  }

  get fingerOnSensor(): number | null {
    return this.faults.noFinger ? null : this.#finger;
  }

  /** Starts serving on the device end of a transport (opens it when needed). */
  async attach(transport: ByteTransport): Promise<void> {
    this.#transport = transport;
    this.#unplugged = false;
    const pacer = new LinePacer(transport, { baud: this.#baud, enabled: this.#pace });
    pacer.onError = (err) => log.debug({ err: String(err) }, 'simulator write failed');
    this.#pacer = pacer;
    transport.on('data', (chunk) => {
      if (this.#transport !== transport || this.#unplugged) return;
      this.#rxReadyAt = pacer.arrival(chunk.length);
      const host = this.#hostBaud?.(this.#refreshHostBaud) ?? null;
      this.#refreshHostBaud = false;
      if (host !== null && host !== this.#baud) return; // wrong speed: the module hears noise
      this.#parser.push(chunk);
    });
    if (!transport.isOpen) await transport.open();
  }

  /** Stops serving (the transport is closed). */
  async detach(): Promise<void> {
    const t = this.#transport;
    this.#transport = null;
    this.#pacer?.clear();
    if (t) await t.close();
  }

  close(): Promise<void> {
    return this.detach();
  }

  placeFinger(fingerId: number): void {
    this.#finger = fingerId;
  }

  liftFinger(): void {
    this.#finger = null;
  }

  present(id: number): void {
    this.placeFinger(id);
  }

  lift(): void {
    this.liftFinger();
  }

  /**
   * Fault switches by name: `bad-checksum` / `dropped-bytes` (true: every frame, a number: that
   * many frames), `stall`, `no-finger`, `low-quality` (on/off), `unplug` (true: now, a number:
   * after that many more bytes sent).
   */
  setFault(name: string, value: boolean | number): void {
    const count = value === true ? Number.POSITIVE_INFINITY : value === false ? 0 : value;
    switch (name) {
      case 'bad-checksum':
        this.faults.badChecksum = count;
        return;
      case 'dropped-bytes':
        this.faults.dropBytes = count;
        return;
      case 'stall':
        this.faults.stall = Boolean(value);
        return;
      case 'no-finger':
        this.faults.noFinger = Boolean(value);
        return;
      case 'low-quality':
        this.faults.lowQuality = Boolean(value);
        return;
      case 'unplug':
        if (value === true) void this.#pullCable();
        else this.faults.unplugAfterBytes = value === false ? null : value;
        return;
      default:
        throw new Error(`unknown GT-521 simulator fault "${name}" (known: ${GT521_FAULT_NAMES.join(', ')})`);
    }
  }

  enroll(slot: number, fingerId: number): void {
    this.enrollDirect(slot, fingerId);
  }

  /** Puts finger `fingerId` into slot `slot` directly (a pre-enrolled module). */
  enrollDirect(slot: number, fingerId: number): Buffer {
    const tpl = encodeSimTemplate({ fingerId, impression: 0, quality: 90 });
    this.slots.set(slot, tpl);
    return tpl;
  }

  /** The template a press of `fingerId` would produce (what the module would enrol). */
  static templateFor(fingerId: number, impression = 0): Buffer {
    return encodeSimTemplate({ fingerId, impression, quality: 90 });
  }

  /** Runs `fn` in order, no earlier than `readyAt` (when the command's last byte arrived). */
  #enqueueAt(readyAt: number, fn: () => Promise<void> | void): void {
    this.#queue = this.#queue
      .then(async () => {
        const wait = readyAt - performance.now();
        if (wait > 0.5) await sleep(wait);
        await fn();
      })
      .catch((err) => log.warn({ err: (err as Error).message }, 'simulator could not answer'));
  }

  #enqueue(fn: () => Promise<void> | void): void {
    this.#enqueueAt(0, fn);
  }

  async #send(frame: Buffer): Promise<void> {
    const pacer = this.#pacer;
    if (!pacer || this.#unplugged) return;
    let out = frame;
    if (this.faults.badChecksum > 0) {
      this.faults.badChecksum--;
      out = Buffer.from(frame);
      out[out.length - 1]! ^= 0x5a;
    }
    if (this.faults.dropBytes > 0) {
      this.faults.dropBytes--;
      const mid = Math.floor(out.length / 2);
      out = Buffer.concat([out.subarray(0, mid), out.subarray(mid + 3)]);
    }
    const cutAfter = this.faults.unplugAfterBytes;
    if (cutAfter !== null && cutAfter <= out.length) {
      this.faults.unplugAfterBytes = null;
      pacer.send(out.subarray(0, cutAfter));
      await pacer.idle();
      await this.#pullCable();
      return;
    }
    if (cutAfter !== null) this.faults.unplugAfterBytes = cutAfter - out.length;
    // Queued, not awaited: an ACK and its data packet leave back to back on the line clock.
    pacer.send(out);
  }

  async #pullCable(): Promise<void> {
    if (this.#unplugged) return;
    this.#unplugged = true;
    this.#pacer?.clear();
    log.info('simulated unplug');
    if (this.#unplug) await this.#unplug();
    else await this.#transport?.close();
  }

  #ack(parameter = 0): Promise<void> {
    return this.#send(encodePacket({ deviceId: this.#deviceId, parameter, code: ACK }));
  }

  #nack(code: number): Promise<void> {
    return this.#send(encodePacket({ deviceId: this.#deviceId, parameter: code, code: NACK }));
  }

  async #ackData(data: Uint8Array): Promise<void> {
    await this.#ack();
    await this.#send(encodeData(data, this.#deviceId));
  }

  #nextImpression(fingerId: number): number {
    const n = (this.#impressions.get(fingerId) ?? 0) + 1;
    this.#impressions.set(fingerId, n);
    return n;
  }

  #image(capture: { fingerId: number; impression: number; quality: number }, width: number, height: number): Uint8Array {
    const key = `${capture.fingerId}/${capture.impression}/${capture.quality}/${width}x${height}`;
    if (this.#lastImage?.key === key) return this.#lastImage.pixels;
    const fitted = fitImage(this.#images(capture.fingerId, capture.impression), width, height);
    const pixels = capture.quality < 40 ? degradeImage(fitted, capture.fingerId ^ capture.impression) : fitted;
    this.#lastImage = { key, pixels };
    return pixels;
  }

  /** The slot holding a template matching `info`, or null. */
  #search(info: SimTemplateInfo | null, exceptSlot?: number): number | null {
    for (const [slot, tpl] of [...this.slots.entries()].sort((a, b) => a[0] - b[0])) {
      if (slot === exceptSlot) continue;
      if (simTemplatesMatch(info, decodeSimTemplate(tpl))) return slot;
    }
    return null;
  }

  #badSlot(id: number): boolean {
    return id < 0 || id >= this.capacity;
  }

  async #onPacket(p: Gt521Packet): Promise<void> {
    if (this.#unplugged) return;
    const name = Object.entries(C).find(([, c]) => c === p.code)?.[0] ?? `0x${p.code.toString(16)}`;
    this.#record(name);
    if (this.faults.stall) return;
    if (this.#awaiting) {
      // A new command while data was expected: the host gave up on the data.
      this.#awaiting = null;
      this.#parser.expectedDataLength = null;
    }
    const param = p.parameter;
    switch (p.code) {
      case C.Open:
        return param !== 0
          ? this.#ackData(encodeDeviceInfo({ firmwareVersion: this.firmwareVersion, isoAreaMaxSize: this.isoAreaMaxSize, serialNumber: this.serialNumber }))
          : this.#ack();
      case C.Close:
        this.led = false;
        return this.#ack();
      case C.ChangeBaud: {
        if (!(BAUD_RATES as readonly number[]).includes(param)) return this.#nack(NackCode.InvalidParam);
        await this.#ack();
        await this.#pacer?.idle();
        this.#baud = param;
        this.#refreshHostBaud = true;
        if (this.#pacer) this.#pacer.baud = param;
        return;
      }
      case C.CmosLed:
        this.led = param !== 0;
        return this.#ack();
      case C.GetEnrollCount:
        return this.#ack(this.slots.size);
      case C.CheckEnrolled:
        if (this.#badSlot(param)) return this.#nack(NackCode.InvalidPos);
        return this.slots.has(param) ? this.#ack() : this.#nack(NackCode.IsNotUsed);
      case C.EnrollStart: {
        if (param !== ENROLL_NO_SAVE) {
          if (this.#badSlot(param)) return this.#nack(NackCode.InvalidPos);
          if (this.slots.has(param)) return this.#nack(NackCode.IsAlreadyUsed);
          if (this.slots.size >= this.capacity) return this.#nack(NackCode.DbIsFull);
        }
        this.#enrol = { slot: param === ENROLL_NO_SAVE ? null : param, step: 0, fingerId: null, quality: 100 };
        return this.#ack();
      }
      case C.Enroll1:
      case C.Enroll2:
      case C.Enroll3:
        return this.#enrolStep(p.code - C.Enroll1 + 1);
      case C.IsPressFinger:
        return this.#ack(this.fingerOnSensor === null ? NackCode.FingerIsNotPressed : 0);
      case C.DeleteID:
        if (this.#badSlot(param)) return this.#nack(NackCode.InvalidPos);
        if (!this.slots.delete(param)) return this.#nack(NackCode.IsNotUsed);
        return this.#ack();
      case C.DeleteAll:
        if (this.slots.size === 0) return this.#nack(NackCode.DbIsEmpty);
        this.slots.clear();
        return this.#ack();
      case C.Verify: {
        if (this.#badSlot(param)) return this.#nack(NackCode.InvalidPos);
        const tpl = this.slots.get(param);
        if (!tpl) return this.#nack(NackCode.IsNotUsed);
        if (!this.#capture) return this.#nack(NackCode.FingerIsNotPressed);
        return simTemplatesMatch(this.#capture, decodeSimTemplate(tpl)) ? this.#ack() : this.#nack(NackCode.VerifyFailed);
      }
      case C.Identify: {
        if (this.slots.size === 0) return this.#nack(NackCode.DbIsEmpty);
        if (!this.#capture) return this.#nack(NackCode.FingerIsNotPressed);
        const slot = this.#search(this.#capture);
        return slot === null ? this.#nack(NackCode.IdentifyFailed) : this.#ack(slot);
      }
      case C.VerifyTemplate:
        if (this.#badSlot(param)) return this.#nack(NackCode.InvalidPos);
        if (!this.slots.has(param)) return this.#nack(NackCode.IsNotUsed);
        return this.#expectData(p);
      case C.IdentifyTemplate:
        if (this.slots.size === 0) return this.#nack(NackCode.DbIsEmpty);
        return this.#expectData(p);
      case C.SetTemplate:
        if (this.#badSlot(param & 0xffff)) return this.#nack(NackCode.InvalidPos);
        return this.#expectData(p);
      case C.CaptureFinger: {
        const finger = this.fingerOnSensor;
        if (finger === null) return this.#nack(NackCode.FingerIsNotPressed);
        const quality = this.faults.lowQuality ? 20 : param !== 0 ? 92 : 80;
        const impression = this.#nextImpression(finger);
        const pixels = this.#image({ fingerId: finger, impression, quality }, IMAGE_WIDTH, IMAGE_HEIGHT);
        this.#capture = { fingerId: finger, impression, quality, best: param !== 0, used: false, pixels };
        return this.#ack();
      }
      case C.MakeTemplate:
        if (!this.#capture) return this.#nack(NackCode.FingerIsNotPressed);
        return this.#ackData(encodeSimTemplate(this.#capture));
      case C.GetImage:
        if (!this.#capture) return this.#nack(NackCode.FingerIsNotPressed);
        return this.#ackData(this.#capture.pixels);
      case C.GetRawImage: {
        const finger = this.fingerOnSensor;
        const pixels =
          finger === null
            ? new Uint8Array(RAW_IMAGE_WIDTH * RAW_IMAGE_HEIGHT).fill(this.led ? 230 : 20)
            : this.#image({ fingerId: finger, impression: this.#impressions.get(finger) ?? 0, quality: this.faults.lowQuality ? 20 : 80 }, RAW_IMAGE_WIDTH, RAW_IMAGE_HEIGHT);
        return this.#ackData(pixels);
      }
      case C.GetTemplate: {
        if (this.#badSlot(param)) return this.#nack(NackCode.InvalidPos);
        const tpl = this.slots.get(param);
        return tpl ? this.#ackData(tpl) : this.#nack(NackCode.IsNotUsed);
      }
      default:
        return this.#nack(NackCode.IsNotSupported);
    }
  }

  async #enrolStep(step: number): Promise<void> {
    const e = this.#enrol;
    if (!e || e.step !== step - 1) {
      this.#enrol = null;
      return this.#nack(NackCode.TurnErr);
    }
    const cap = this.#capture;
    if (!cap || cap.used) return this.#nack(NackCode.FingerIsNotPressed);
    cap.used = true;
    if (cap.quality < 40) return this.#nack(NackCode.BadFinger);
    if (e.fingerId !== null && e.fingerId !== cap.fingerId) {
      this.#enrol = null;
      return this.#nack(NackCode.EnrollFailed);
    }
    e.fingerId = cap.fingerId;
    e.quality = Math.min(e.quality, cap.quality);
    e.step = step;
    if (step < 3) return this.#ack();
    this.#enrol = null;
    const dup = this.#search(cap);
    if (dup !== null) return this.#nack(dup);
    const tpl = encodeSimTemplate({ fingerId: cap.fingerId, impression: cap.impression, quality: e.quality });
    if (e.slot === null) return this.#ackData(tpl);
    this.slots.set(e.slot, tpl);
    return this.#ack();
  }

  #expectData(p: Gt521Packet): Promise<void> {
    this.#awaiting = { command: p.code, parameter: p.parameter };
    this.#parser.expectedDataLength = TEMPLATE_SIZE;
    return this.#ack();
  }

  async #onData(d: Gt521DataPacket): Promise<void> {
    const a = this.#awaiting;
    this.#awaiting = null;
    if (!a || this.faults.stall || this.#unplugged) return;
    const info = decodeSimTemplate(d.data);
    switch (a.command) {
      case C.VerifyTemplate:
        return simTemplatesMatch(info, decodeSimTemplate(this.slots.get(a.parameter)!)) ? this.#ack() : this.#nack(NackCode.VerifyFailed);
      case C.IdentifyTemplate: {
        const slot = this.#search(info);
        return slot === null ? this.#nack(NackCode.IdentifyFailed) : this.#ack(slot);
      }
      case C.SetTemplate: {
        const slot = a.parameter & 0xffff;
        if (!(a.parameter & SET_TEMPLATE_NO_DUP_CHECK)) {
          const dup = this.#search(info, slot);
          if (dup !== null) return this.#nack(dup);
        }
        this.slots.set(slot, Buffer.from(d.data));
        return this.#ack();
      }
      default:
        return undefined;
    }
  }
}
