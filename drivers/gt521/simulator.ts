/**
 * A byte-exact GT-521F32/F52 simulator. It sits on the device end of any ByteTransport (the
 * `device` end of a memory pair, or a SerialTransport on one side of a socat pty pair), parses the
 * host's packets with the same parser the driver uses, and answers the way the module does, at
 * the speed the baud rate allows.
 *
 * Virtual fingers are numbers (the synthetic seed). `present(id)` puts one on the sensor;
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
import type { SimImageSource } from '../simulator/images.js';
import { SerialSimulator } from '../simulator/serial.js';
import { encodeData, encodePacket, type Gt521DataPacket, type Gt521Packet } from './codec.js';
import { encodeDeviceInfo } from './driver.js';
import { Gt521Parser } from './parser.js';
import {
  ACK,
  BAUD_RATES,
  commandName,
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

export { RECEIVED_KEPT } from '../simulator/base.js';


export type Gt521Model = (typeof MODELS)[number]['model'];

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

export class Gt521Simulator extends SerialSimulator {
  readonly family = 'gt521' as const;
  readonly modality = 'finger' as const;
  readonly model: Gt521Model;
  readonly capacity: number;
  /** Slot → template (the module's flash). */
  readonly slots = new Map<number, Buffer>();
  led = false;
  firmwareVersion: number;
  isoAreaMaxSize: number;
  serialNumber: Buffer;

  readonly #images: SimImageSource;
  readonly #deviceId: number;
  /** When the last byte received so far would have arrived on a real line. */
  #rxReadyAt = 0;
  #parser: Gt521Parser;
  #capture: Capture | null = null;
  #enrol: Enrolment | null = null;
  /** Waiting for the host's data packet after ACKing this command. */
  #awaiting: { command: number; parameter: number } | null = null;

  constructor(options: Gt521SimulatorOptions) {
    super({ device: 'GT-521', baud: options.baud ?? DEFAULT_BAUD, ...(options.pace !== undefined ? { pacing: options.pace } : {}), ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}), ...(options.unplug ? { unplug: options.unplug } : {}) }, 3);
    this.model = options.model ?? 'GT-521F52';
    this.capacity = MODELS.find((m) => m.model === this.model)!.capacity;
    this.firmwareVersion = options.firmwareVersion ?? 0x20150930;
    this.isoAreaMaxSize = options.isoAreaMaxSize ?? 0x1c000;
    this.serialNumber = Buffer.from(options.serialNumber ?? Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
    this.#deviceId = options.deviceId ?? DEFAULT_DEVICE_ID;
    this.#images = options.images;
    this.#parser = new Gt521Parser({
      packet: (p) => {
        this.record(commandName(p.code));
        this.later(this.#rxReadyAt, () => this.#onPacket(p));
      },
      data: (d) => this.later(this.#rxReadyAt, () => this.#onData(d)),
      error: () => {
        if (this.#awaiting) {
          this.#awaiting = null;
          this.#parser.expectedDataLength = null;
          this.later(0, () => this.#nack(NackCode.CommErr));
        }
      },
    });
  }

  protected receive(chunk: Buffer, readyAt: number): void {
    this.#rxReadyAt = readyAt;
    this.#parser.push(chunk);
  }

  /** Power cycle: the slots (flash) stay, the capture, an enrolment and a half-done upload go. */
  protected powerUp(): void {
    this.#parser.reset();
    this.#parser.expectedDataLength = null;
    this.#capture = null;
    this.#enrol = null;
    this.#awaiting = null;
  }

  /** Stops serving (the transport is closed). */
  detach(): Promise<void> {
    return this.close();
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

  #ack(parameter = 0): void {
    this.send(encodePacket({ deviceId: this.#deviceId, parameter, code: ACK }));
  }

  #nack(code: number): void {
    this.send(encodePacket({ deviceId: this.#deviceId, parameter: code, code: NACK }));
  }

  #ackData(data: Uint8Array): void {
    this.#ack();
    this.send(encodeData(data, this.#deviceId));
  }

  #image(capture: { fingerId: number; impression: number; quality: number }, width: number, height: number): Uint8Array {
    return this.picture(this.#images, capture.fingerId, capture.impression, width, height, capture.quality < 40);
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
        this.#ack();
        return this.switchBaud(param);
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
        return this.#ack(this.presented === null ? NackCode.FingerIsNotPressed : 0);
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
        const finger = this.presented;
        if (finger === null) return this.#nack(NackCode.FingerIsNotPressed);
        const quality = this.faults.lowQuality ? 20 : param !== 0 ? 92 : 80;
        const impression = this.nextImpression(finger);
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
        const finger = this.presented;
        const pixels =
          finger === null
            ? new Uint8Array(RAW_IMAGE_WIDTH * RAW_IMAGE_HEIGHT).fill(this.led ? 230 : 20)
            : this.#image({ fingerId: finger, impression: this.impressions(finger), quality: this.faults.lowQuality ? 20 : 80 }, RAW_IMAGE_WIDTH, RAW_IMAGE_HEIGHT);
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

  #enrolStep(step: number): void {
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

  #expectData(p: Gt521Packet): void {
    this.#awaiting = { command: p.code, parameter: p.parameter };
    this.#parser.expectedDataLength = TEMPLATE_SIZE;
    return this.#ack();
  }

  #onData(d: Gt521DataPacket): void {
    const a = this.#awaiting;
    this.#awaiting = null;
    if (!a) return;
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
