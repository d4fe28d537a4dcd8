/**
 * A byte-exact R30x simulator (R503, R307, R305, AS608, ZFM-20). It sits on the device end of any
 * ByteTransport (the `device` end of a memory pair, or a SerialTransport on one side of a socat
 * pty pair), parses the host's packets with the driver's own parser and answers like the module:
 * same packets, same confirmation codes, at the speed the baud rate allows (the shared serial
 * line, simulator/serial.ts: output paced, commands handled no earlier than their last byte
 * would have arrived).
 *
 * Virtual fingers are numbers (the synthetic seed): `present(id)` puts one on the sensor, `lift()`
 * takes it off. GenImg takes its next impression; UpImage sends the picture from the injected
 * image source, fitted to 256×288 and cut to 4 bits a pixel; Img2Tz makes a character file in the
 * simulator's own layout (sim-template.ts) that Search/Match/RegModel compare by finger identity.
 *
 * Where the manuals are silent, the simulator chooses (docs/hardware.md records it): UpImage
 * without a captured image answers 0x15; UpChar of an empty buffer answers 0x0D; Store of an
 * empty buffer 0x22; a Search range reaching past the library is clamped to it and one starting
 * past it answers 0x0B; an instruction the model lacks (LED, product info on non-R503) answers
 * 0xFC; a packet with a bad checksum, another address, or sent at another baud rate than the
 * module's is ignored.
 *
 * Fault switches (`setFault`, simulator/faults.ts): bad-checksum, dropped-bytes (one byte from
 * the middle of a packet), stall, unplug, no-finger, low-quality.
 *
 * Tested in test/unit/drivers/r30x/scanner.test.ts (every command against it, through
 * scanner.contract.ts), test/unit/drivers/r30x/driver.test.ts and
 * test/unit/drivers/r30x/r30x-serial.test.ts (over a serial line).
 */
import { AgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import type { ByteTransport } from '../transport/transport.js';
import type { SimImageSource } from '../simulator/images.js';
import { SerialSimulator } from '../simulator/serial.js';
import { DEFAULT_ADDRESS, PacketId, encodeAck, packNibbles, splitDataPackets, type R30xPacket } from './codec.js';
import { R30X_COMMANDS, type R30x, type R30xCommand, type R30xCommandName, type SearchHit } from './commands.js';
import { R30xParser } from './parser.js';
import {
  CHAR_FILE_BYTES,
  IMAGE_HEIGHT,
  IMAGE_WIDTH,
  INSTRUCTION_NAMES,
  Instruction as I,
  PACKET_SIZES,
  Register,
  Status,
  type InstructionName,
} from './protocol.js';
import { decodeR30xSimTemplate, encodeR30xSimTemplate, r30xSimScore, r30xSimThreshold } from './sim-template.js';

const log = logger('drivers:r30x-sim');

export const R30X_MODELS = {
  R503: { capacity: 200, led: true, productInfo: true },
  R307: { capacity: 1000, led: false, productInfo: false },
  R305: { capacity: 1000, led: false, productInfo: false },
  AS608: { capacity: 300, led: false, productInfo: false },
  'ZFM-20': { capacity: 162, led: false, productInfo: false },
} as const;
export type R30xModel = keyof typeof R30X_MODELS;

export interface R30xSimulatorOptions {
  model?: R30xModel;
  /** Library size (default: the model's). */
  capacity?: number;
  baud?: number;
  /** Pace at the baud rate (default true); false answers at once (fast in-process tests). */
  pacing?: boolean;
  address?: number;
  /** Handshake password; when not 0 every command but VfyPwd answers 0x21 until verified. */
  password?: number;
  securityLevel?: number;
  packetSize?: 32 | 64 | 128 | 256;
  /** Finger images: `(fingerId, impression) => 8-bit image`. */
  imageSource: SimImageSource;
  /** The host side's line speed where it can be read (a pty): a mismatch makes the module deaf. `fresh` asks to re-read it. */
  hostBaud?: (fresh?: boolean) => number | null;
  /** Module serial number reported by ReadProdInfo. */
  serial?: string;
}

export interface LedState {
  control: number;
  speed: number;
  color: number;
  count: number;
}

/**
 * A handler's answer: a bare confirmation code, or a response (its code 0 unless said), the data
 * packets that follow (made once the acknowledgement is on its way) and what to do once it is sent.
 */
type Reply<Res> = number | { response: Res; code?: number; data?: () => Uint8Array; afterSend?: () => void };
type Handler<Req, Res> = (req: Req) => Reply<Res>;
type Handlers = { [K in R30xCommandName]: (typeof R30x)[K] extends R30xCommand<infer Req, infer Res> ? Handler<Req, Res> : never };

interface ImageBuffer {
  fingerId: number;
  impression: number;
  lowQuality: boolean;
}

export class R30xSimulator extends SerialSimulator {
  readonly family = 'r30x' as const;
  readonly modality = 'finger' as const;
  readonly model: R30xModel;
  readonly capacity: number;
  readonly address: number;
  /** Slot → character file (the module's flash). */
  readonly library = new Map<number, Buffer>();
  led: LedState | null = null;
  securityLevel: number;
  packetSize: number;
  #parser = new R30xParser();
  #options: R30xSimulatorOptions;
  #password: number;
  #verified = false;
  #image: ImageBuffer | null = null;
  #chars: [Buffer | null, Buffer | null] = [null, null];
  #downChar: { buffer: 0 | 1; parts: Buffer[] } | null = null;

  constructor(transport: ByteTransport, options: R30xSimulatorOptions) {
    const model = options.model ?? 'R503';
    if (!(model in R30X_MODELS)) {
      throw new AgentError(
        'DRIVER_BAD_ARGUMENT',
        `unknown R30x model "${model}"`,
        { model },
        { hint: `models: ${Object.keys(R30X_MODELS).join(', ')}` },
      );
    }
    const baud = options.baud ?? 57600;
    if (!Number.isInteger(baud / 9600) || baud < 9600 || baud > 115200) {
      throw new AgentError(
        'DRIVER_BAD_ARGUMENT',
        `an R30x runs at 9600 × N baud (N = 1..12), not ${baud}`,
        { baud },
        { hint: 'use 9600, 19200, 38400, 57600 or 115200' },
      );
    }
    super(
      {
        device: 'R30x',
        baud,
        ...(options.pacing !== undefined ? { pacing: options.pacing } : {}),
        ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}),
      },
      1,
    );
    this.#options = options;
    this.model = model;
    this.capacity = options.capacity ?? R30X_MODELS[this.model].capacity;
    this.address = options.address ?? DEFAULT_ADDRESS;
    this.securityLevel = options.securityLevel ?? 3;
    this.packetSize = options.packetSize ?? 128;
    this.#password = options.password ?? 0;
    void this.attach(transport).catch((err: unknown) => log.warn({ err: String(err) }, 'simulator could not open its transport'));
  }

  /** Power cycle: the library (flash) and the settings stay, the buffers (RAM) are lost. */
  protected powerUp(): void {
    this.#parser.reset();
    this.#image = null;
    this.#chars = [null, null];
    this.#downChar = null;
    this.#verified = this.#password === 0;
  }

  /** Enrols virtual finger `fingerId` straight into `slot` (test and demo set-up). */
  enroll(slot: number, fingerId: number): void {
    this.library.set(slot, encodeR30xSimTemplate({ fingerId, impression: 0, kind: 2 }));
  }

  // ---------------------------------------------------------------- input

  protected receive(chunk: Buffer, readyAt: number): void {
    for (const r of this.#parser.push(chunk)) {
      if (!r.ok) continue; // a real module ignores a packet with a bad checksum
      const packet = r.packet;
      if (packet.address !== this.address) continue;
      if (packet.pid === PacketId.command && packet.payload.length > 0)
        this.record(INSTRUCTION_NAMES.get(packet.payload[0]!) ?? `0x${packet.payload[0]!.toString(16)}`);
      this.later(readyAt, () => this.#handle(packet));
    }
  }

  #handle(packet: R30xPacket): void {
    if (packet.pid === PacketId.data || packet.pid === PacketId.end) {
      const d = this.#downChar;
      if (!d) return;
      d.parts.push(packet.payload);
      if (packet.pid === PacketId.end) {
        this.#chars[d.buffer] = Buffer.concat(d.parts);
        this.#downChar = null;
      }
      return;
    }
    if (packet.pid !== PacketId.command || packet.payload.length < 1) return;
    const instr = packet.payload[0]!;
    const params = packet.payload.subarray(1);
    if (!this.#verified && instr !== I.VfyPwd) {
      this.#ack(0x21);
      return;
    }
    const cmd = R30X_COMMANDS.get(instr);
    const handle = cmd && (this.#handlers as Record<string, Handler<never, unknown> | undefined>)[cmd.name];
    if (!cmd || !handle || this.#lacks(cmd.name)) {
      this.#ack(0xfc);
      return;
    }
    this.#serve(cmd, params, handle);
  }

  /** Commands only some models have (the R503's ring LED and product info). */
  #lacks(name: InstructionName): boolean {
    const features = R30X_MODELS[this.model];
    return (name === 'AuraLedConfig' && !features.led) || (name === 'ReadProdInfo' && !features.productInfo);
  }

  /** Decodes the request with the command's codec, runs its handler and encodes its answer. */
  #serve<Req, Res>(cmd: R30xCommand<Req, Res>, params: Buffer, handle: Handler<Req, Res>): void {
    const req = cmd.decodeRequest(params);
    if (req === null) {
      this.#ack(0x01);
      return;
    }
    const reply = handle(req);
    if (typeof reply === 'number') {
      this.#ack(reply);
      return;
    }
    this.#ack(reply.code ?? 0x00, cmd.encodeResponse(reply.response, req));
    if (reply.data) this.#sendData(reply.data());
    reply.afterSend?.();
  }

  /** What the module does for each command it knows (the rest answer 0xFC, unsupported). */
  readonly #handlers: Handlers = {
    VfyPwd: ({ password }) => {
      if (password !== this.#password >>> 0) return 0x13;
      this.#verified = true;
      return 0x00;
    },
    ReadSysPara: () => {
      let status = 0;
      if (this.#image) status |= Status.imageValid;
      if (this.#verified) status |= Status.passwordVerified;
      return {
        response: {
          status,
          systemId: 0x0009,
          capacity: this.capacity,
          securityLevel: this.securityLevel,
          address: this.address,
          packetSize: this.packetSize,
          baud: this.baud,
        },
      };
    },
    ReadProdInfo: () => {
      const serial = this.#options.serial ?? 'SIM00001';
      return {
        response: {
          model: this.model,
          batch: 'SIM1',
          serial,
          hardwareVersion: '1.2',
          sensor: 'SIMSENS',
          sensorWidth: IMAGE_WIDTH,
          sensorHeight: IMAGE_HEIGHT,
          templateSize: CHAR_FILE_BYTES,
          capacity: this.capacity,
        },
      };
    },
    WriteReg: ({ register, value }) => {
      if (register === Register.baud) {
        if (value < 1 || value > 12) return 0x1b;
        // Acknowledged at the old speed, then the line switches.
        return { response: {}, afterSend: () => void this.switchBaud(value * 9600) };
      }
      if (register === Register.securityLevel) {
        if (value < 1 || value > 5) return 0x1b;
        this.securityLevel = value;
        return 0x00;
      }
      if (register === Register.packetSize) {
        if (value > 3) return 0x1b;
        this.packetSize = PACKET_SIZES[value]!;
        return 0x00;
      }
      return 0x1a;
    },
    GenImg: () => {
      const finger = this.presented;
      if (finger === null) return 0x02;
      this.#image = { fingerId: finger, impression: this.nextImpression(finger), lowQuality: this.faults.lowQuality };
      return 0x00;
    },
    UpImage: () => {
      if (!this.#image) return 0x15;
      const image = this.#image;
      return { response: {}, data: () => packNibbles(this.#pixels(image)) };
    },
    Img2Tz: ({ buffer }) => {
      const buf = bufferIndex(buffer);
      if (buf === null) return 0x01;
      if (!this.#image) return 0x15;
      if (this.#image.lowQuality) return 0x07;
      this.#chars[buf] = encodeR30xSimTemplate({ fingerId: this.#image.fingerId, impression: this.#image.impression, kind: 1 });
      return 0x00;
    },
    RegModel: () => {
      const [a, b] = this.#chars;
      const x = decodeR30xSimTemplate(a ?? undefined);
      const y = decodeR30xSimTemplate(b ?? undefined);
      if (!x || !y || x.fingerId !== y.fingerId) return 0x0a;
      const merged = encodeR30xSimTemplate({ fingerId: x.fingerId, impression: x.impression * 1000 + y.impression, kind: 2 });
      this.#chars = [merged, Buffer.from(merged)];
      return 0x00;
    },
    Store: ({ buffer, slot }) => {
      const buf = bufferIndex(buffer);
      if (buf === null) return 0x01;
      if (slot >= this.capacity) return 0x0b;
      const c = this.#chars[buf];
      if (!c) return 0x22;
      this.library.set(slot, Buffer.from(c));
      return 0x00;
    },
    LoadChar: ({ buffer, slot }) => {
      const buf = bufferIndex(buffer);
      if (buf === null) return 0x01;
      if (slot >= this.capacity) return 0x0b;
      const t = this.library.get(slot);
      if (!t) return 0x0c;
      this.#chars[buf] = Buffer.from(t);
      return 0x00;
    },
    UpChar: ({ buffer }) => {
      const buf = bufferIndex(buffer);
      if (buf === null) return 0x01;
      const c = this.#chars[buf];
      if (!c) return 0x0d;
      return { response: {}, data: () => c };
    },
    DownChar: ({ buffer }) => {
      const buf = bufferIndex(buffer);
      if (buf === null) return 0x01;
      this.#downChar = { buffer: buf, parts: [] };
      return 0x00;
    },
    Search: (req) => this.#search(req),
    HiSpeedSearch: (req) => this.#search(req),
    Match: () => {
      const score = r30xSimScore(this.#chars[0] ?? undefined, this.#chars[1] ?? undefined);
      return { code: score >= r30xSimThreshold(this.securityLevel) ? 0x00 : 0x08, response: { score } };
    },
    DeletChar: ({ slot, count }) => {
      if (slot >= this.capacity || slot + count > this.capacity) return 0x10;
      for (let s = slot; s < slot + count; s++) this.library.delete(s);
      return 0x00;
    },
    Empty: () => {
      this.library.clear();
      return 0x00;
    },
    TemplateNum: () => ({ response: { count: this.library.size } }),
    ReadIndexTable: ({ page }) => (page > 3 ? 0x0b : { response: { slots: [...this.library.keys()] } }),
    AuraLedConfig: (led) => {
      this.led = led;
      return 0x00;
    },
  };

  #search({ buffer, start, count }: { buffer: number; start: number; count: number }): Reply<SearchHit> {
    const buf = bufferIndex(buffer);
    if (buf === null) return 0x01;
    if (start >= this.capacity) return 0x0b;
    const probe = this.#chars[buf];
    if (!probe) return 0x09;
    const end = Math.min(this.capacity, start + count);
    let best = { slot: -1, score: 0 };
    for (const [slot, t] of this.library) {
      if (slot < start || slot >= end) continue;
      const score = r30xSimScore(probe, t);
      if (score > best.score || (score === best.score && score > 0 && slot < best.slot)) best = { slot, score };
    }
    if (best.slot < 0 || best.score < r30xSimThreshold(this.securityLevel)) return 0x09;
    return { response: best };
  }

  // ---------------------------------------------------------------- output

  #pixels(img: ImageBuffer): Uint8Array {
    return this.picture(this.#options.imageSource, img.fingerId, img.impression, IMAGE_WIDTH, IMAGE_HEIGHT, img.lowQuality);
  }

  #ack(code: number, params?: Uint8Array): void {
    this.send(encodeAck(code, params, this.address));
  }

  /** Data packets one by one, so the faults hit each like a packet on the wire. */
  #sendData(data: Uint8Array): void {
    for (const packet of splitDataPackets(data, this.packetSize, this.address)) this.send(packet);
  }
}

/** CharBuffer 1 or 2 as an index; null for any other number. */
function bufferIndex(id: number): 0 | 1 | null {
  return id === 1 ? 0 : id === 2 ? 1 : null;
}
