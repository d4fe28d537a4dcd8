/**
 * A byte-exact GT-521F32/F52 simulator. It sits on the device end of any ByteTransport (the
 * `device` end of a memory pair, or a SerialTransport on one side of a socat pty pair), parses the
 * host's packets with the same parser the driver uses, decodes each command and encodes each
 * answer with the codec the driver uses (commands.ts), and answers the way the module does, at
 * the speed the baud rate allows (the shared serial line, simulator/serial.ts). What the module
 * does is one handler per command.
 *
 * Virtual fingers are numbers (the synthetic seed). `present(id)` puts one on the sensor;
 * captures make images from the injected image source and templates in the simulator's own
 * 498-byte layout (sim-template.ts), so Verify, Identify, the duplicate check and template
 * upload/download behave like the module.
 *
 * Where the programming guide says nothing, the simulator chooses (docs/hardware.md records it):
 * a command that needs a captured finger when none was captured gets NACK_FINGER_IS_NOT_PRESSED;
 * IsPressFinger answers 0 for pressed and 0x1012 for not pressed; an unknown command gets
 * NACK_IS_NOT_SUPPORTED; a command packet with a bad checksum is ignored (the host times out and
 * retries); host data with a bad checksum gets NACK_COMM_ERR. Fault switches: simulator/faults.ts
 * (dropped-bytes takes 3 bytes from the middle of a frame).
 *
 * Tested in test/unit/drivers/gt521/driver.test.ts (every command against it in-process) and
 * test/unit/drivers/gt521/gt521-serial.test.ts (over a serial line).
 */
import type { SimImageSource } from '../simulator/images.js';
import { SerialSimulator } from '../simulator/serial.js';
import { encodeData, encodePacket, type Gt521DataPacket, type Gt521Packet } from './codec.js';
import { GT521_COMMANDS, type Gt521, type Gt521CodecName, type Gt521CommandCodec } from './commands.js';
import { Gt521Parser } from './parser.js';
import {
  ACK,
  BAUD_RATES,
  commandName,
  DEFAULT_BAUD,
  DEFAULT_DEVICE_ID,
  IMAGE_HEIGHT,
  IMAGE_WIDTH,
  MODELS,
  NACK,
  NackCode,
  RAW_IMAGE_HEIGHT,
  RAW_IMAGE_WIDTH,
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

interface Enrollment {
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
  #enrollment: Enrollment | null = null;
  /** Waiting for the host's data packet after ACKing an upload: what to do with it. */
  #awaiting: ((data: Buffer) => void | Promise<void>) | null = null;

  constructor(options: Gt521SimulatorOptions) {
    super(
      {
        device: 'GT-521',
        baud: options.baud ?? DEFAULT_BAUD,
        ...(options.pace !== undefined ? { pacing: options.pace } : {}),
        ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}),
        ...(options.unplug ? { unplug: options.unplug } : {}),
      },
      3,
    );
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
    this.#enrollment = null;
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

  #onPacket(p: Gt521Packet): void | Promise<void> {
    if (this.#awaiting) {
      // A new command while data was expected: the host gave up on the data.
      this.#awaiting = null;
      this.#parser.expectedDataLength = null;
    }
    const cmd = GT521_COMMANDS.get(p.code);
    const handle = cmd && (this.#handlers as Record<string, Handler<never, unknown>>)[cmd.name];
    if (!cmd || !handle) return this.#nack(NackCode.IsNotSupported);
    return this.#answer(cmd, handle(cmd.decodeRequest(p.parameter)));
  }

  /** Sends a handler's reply through the command's codec. */
  async #answer<Res>(cmd: Gt521CommandCodec<never, Res>, reply: Reply<Res>): Promise<void> {
    if ('nack' in reply) return this.#nack(reply.nack);
    if ('upload' in reply) {
      // ACK, then the host's data packet; the answer comes once it is in (#onData).
      this.#awaiting = (data) => this.#answer(cmd, reply.upload(data));
      this.#parser.expectedDataLength = cmd.hostData ?? TEMPLATE_SIZE;
      return this.#ack();
    }
    const { parameter, data } = cmd.encodeResponse(reply.ack);
    this.#ack(parameter);
    if (data) this.send(encodeData(data, this.#deviceId));
    await reply.afterSend?.();
  }

  #onData(d: Gt521DataPacket): void | Promise<void> {
    const upload = this.#awaiting;
    this.#awaiting = null;
    return upload?.(d.data);
  }

  /** What the module does for each command (the rest get NACK_IS_NOT_SUPPORTED). */
  readonly #handlers: Handlers = {
    Open: ({ extraInfo }) =>
      ack(
        extraInfo ? { firmwareVersion: this.firmwareVersion, isoAreaMaxSize: this.isoAreaMaxSize, serialNumber: this.serialNumber } : null,
      ),
    Close: () => {
      this.led = false;
      return ack({});
    },
    ChangeBaud: ({ baud }) => {
      if (!(BAUD_RATES as readonly number[]).includes(baud)) return nack(NackCode.InvalidParam);
      return { ack: {}, afterSend: () => this.switchBaud(baud) };
    },
    CmosLed: ({ on }) => {
      this.led = on;
      return ack({});
    },
    GetEnrollCount: () => ack({ count: this.slots.size }),
    CheckEnrolled: ({ slot }) => {
      if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
      return this.slots.has(slot) ? ack({}) : nack(NackCode.IsNotUsed);
    },
    EnrollStart: ({ slot }) => {
      if (slot !== null) {
        if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
        if (this.slots.has(slot)) return nack(NackCode.IsAlreadyUsed);
        if (this.slots.size >= this.capacity) return nack(NackCode.DbIsFull);
      }
      this.#enrollment = { slot, step: 0, fingerId: null, quality: 100 };
      return ack({});
    },
    Enroll1: () => this.#enrollStep(1, () => ({})),
    Enroll2: () => this.#enrollStep(2, () => ({})),
    Enroll3: () => this.#enrollStep(3, (template) => ({ template })),
    IsPressFinger: () => ack({ pressed: this.presented !== null }),
    DeleteID: ({ slot }) => {
      if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
      if (!this.slots.delete(slot)) return nack(NackCode.IsNotUsed);
      return ack({});
    },
    DeleteAll: () => {
      if (this.slots.size === 0) return nack(NackCode.DbIsEmpty);
      this.slots.clear();
      return ack({});
    },
    Verify: ({ slot }) => {
      if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
      const tpl = this.slots.get(slot);
      if (!tpl) return nack(NackCode.IsNotUsed);
      if (!this.#capture) return nack(NackCode.FingerIsNotPressed);
      return simTemplatesMatch(this.#capture, decodeSimTemplate(tpl)) ? ack({}) : nack(NackCode.VerifyFailed);
    },
    Identify: () => {
      if (this.slots.size === 0) return nack(NackCode.DbIsEmpty);
      if (!this.#capture) return nack(NackCode.FingerIsNotPressed);
      const slot = this.#search(this.#capture);
      return slot === null ? nack(NackCode.IdentifyFailed) : ack({ slot });
    },
    VerifyTemplate: ({ slot }) => {
      if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
      if (!this.slots.has(slot)) return nack(NackCode.IsNotUsed);
      return {
        upload: (template) =>
          simTemplatesMatch(decodeSimTemplate(template), decodeSimTemplate(this.slots.get(slot)!)) ? ack({}) : nack(NackCode.VerifyFailed),
      };
    },
    IdentifyTemplate: () => {
      if (this.slots.size === 0) return nack(NackCode.DbIsEmpty);
      return {
        upload: (template) => {
          const slot = this.#search(decodeSimTemplate(template));
          return slot === null ? nack(NackCode.IdentifyFailed) : ack({ slot });
        },
      };
    },
    SetTemplate: ({ slot, checkDuplicate }) => {
      if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
      return {
        upload: (template) => {
          const dup = checkDuplicate ? this.#search(decodeSimTemplate(template), slot) : null;
          if (dup !== null) return nack(dup);
          this.slots.set(slot, Buffer.from(template));
          return ack({});
        },
      };
    },
    CaptureFinger: ({ best }) => {
      const finger = this.presented;
      if (finger === null) return nack(NackCode.FingerIsNotPressed);
      const quality = this.faults.lowQuality ? 20 : best ? 92 : 80;
      const impression = this.nextImpression(finger);
      const pixels = this.#image({ fingerId: finger, impression, quality }, IMAGE_WIDTH, IMAGE_HEIGHT);
      this.#capture = { fingerId: finger, impression, quality, best, used: false, pixels };
      return ack({});
    },
    MakeTemplate: () => (this.#capture ? ack({ data: encodeSimTemplate(this.#capture) }) : nack(NackCode.FingerIsNotPressed)),
    GetImage: () => (this.#capture ? ack({ data: Buffer.from(this.#capture.pixels) }) : nack(NackCode.FingerIsNotPressed)),
    GetRawImage: () => {
      const finger = this.presented;
      const pixels =
        finger === null
          ? new Uint8Array(RAW_IMAGE_WIDTH * RAW_IMAGE_HEIGHT).fill(this.led ? 230 : 20)
          : this.#image(
              { fingerId: finger, impression: this.impressions(finger), quality: this.faults.lowQuality ? 20 : 80 },
              RAW_IMAGE_WIDTH,
              RAW_IMAGE_HEIGHT,
            );
      return ack({ data: Buffer.from(pixels) });
    },
    GetTemplate: ({ slot }) => {
      if (this.#badSlot(slot)) return nack(NackCode.InvalidPos);
      const tpl = this.slots.get(slot);
      return tpl ? ack({ data: tpl }) : nack(NackCode.IsNotUsed);
    },
  };

  /** Enrollment step `step` with the last capture; `answer` shapes the ACK (Enroll3 may carry the template). */
  #enrollStep<Res>(step: number, answer: (template: Buffer | null) => Res): Reply<Res> {
    const e = this.#enrollment;
    if (!e || e.step !== step - 1) {
      this.#enrollment = null;
      return nack(NackCode.TurnErr);
    }
    const cap = this.#capture;
    if (!cap || cap.used) return nack(NackCode.FingerIsNotPressed);
    cap.used = true;
    if (cap.quality < 40) return nack(NackCode.BadFinger);
    if (e.fingerId !== null && e.fingerId !== cap.fingerId) {
      this.#enrollment = null;
      return nack(NackCode.EnrollFailed);
    }
    e.fingerId = cap.fingerId;
    e.quality = Math.min(e.quality, cap.quality);
    e.step = step;
    if (step < 3) return ack(answer(null));
    this.#enrollment = null;
    const dup = this.#search(cap);
    if (dup !== null) return nack(dup);
    const tpl = encodeSimTemplate({ fingerId: cap.fingerId, impression: cap.impression, quality: e.quality });
    if (e.slot === null) return ack(answer(tpl));
    this.slots.set(e.slot, tpl);
    return ack(answer(null));
  }
}

/**
 * A handler's reply: an ACK with the answer (and what to do once it is sent), a NACK with its
 * error code, or, for uploads, an ACK now and the answer once the host's data packet is in.
 */
type Reply<Res> = { ack: Res; afterSend?: () => void | Promise<void> } | { nack: number } | { upload: (data: Buffer) => Reply<Res> };
type Handler<Req, Res> = (req: Req) => Reply<Res>;
type Handlers = { [K in Gt521CodecName]: (typeof Gt521)[K] extends Gt521CommandCodec<infer Req, infer Res> ? Handler<Req, Res> : never };

function ack<Res>(res: Res): Reply<Res> {
  return { ack: res };
}

function nack(code: number): { nack: number } {
  return { nack: code };
}
