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
 */
import { AgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import type { ByteTransport } from '../transport/transport.js';
import type { SimImageSource } from '../simulator/images.js';
import { SerialSimulator } from '../simulator/serial.js';
import { DEFAULT_ADDRESS, PacketId, encodePacket, packNibbles, type R30xPacket } from './codec.js';
import { R30xParser } from './parser.js';
import { CHAR_FILE_BYTES, IMAGE_HEIGHT, IMAGE_WIDTH, INSTRUCTION_NAMES, Instruction as I, PACKET_SIZES, Register, Status } from './protocol.js';
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
      throw new AgentError('DRIVER_BAD_ARGUMENT', `unknown R30x model "${model}"`, { model }, { hint: `models: ${Object.keys(R30X_MODELS).join(', ')}` });
    }
    const baud = options.baud ?? 57600;
    if (!Number.isInteger(baud / 9600) || baud < 9600 || baud > 115200) {
      throw new AgentError('DRIVER_BAD_ARGUMENT', `an R30x runs at 9600 × N baud (N = 1..12), not ${baud}`, { baud }, { hint: 'use 9600, 19200, 38400, 57600 or 115200' });
    }
    super({ device: 'R30x', baud, ...(options.pacing !== undefined ? { pacing: options.pacing } : {}), ...(options.hostBaud ? { hostBaud: options.hostBaud } : {}) }, 1);
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
      if (packet.pid === PacketId.command && packet.payload.length > 0) this.record(INSTRUCTION_NAMES.get(packet.payload[0]!) ?? `0x${packet.payload[0]!.toString(16)}`);
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
    const p = packet.payload.subarray(1);
    if (!this.#verified && instr !== I.VfyPwd) return this.#ack(0x21);
    switch (instr) {
      case I.VfyPwd: {
        if (p.length < 4) return this.#ack(0x01);
        const ok = p.readUInt32BE(0) === this.#password >>> 0;
        if (ok) this.#verified = true;
        return this.#ack(ok ? 0x00 : 0x13);
      }
      case I.ReadSysPara: {
        const b = Buffer.alloc(16);
        let status = 0;
        if (this.#image) status |= Status.imageValid;
        if (this.#verified) status |= Status.passwordVerified;
        b.writeUInt16BE(status, 0);
        b.writeUInt16BE(0x0009, 2);
        b.writeUInt16BE(this.capacity, 4);
        b.writeUInt16BE(this.securityLevel, 6);
        b.writeUInt32BE(this.address >>> 0, 8);
        b.writeUInt16BE((PACKET_SIZES as readonly number[]).indexOf(this.packetSize), 12);
        b.writeUInt16BE(this.baud / 9600, 14);
        return this.#ack(0x00, b);
      }
      case I.ReadProdInfo: {
        if (!R30X_MODELS[this.model].productInfo) return this.#ack(0xfc);
        const b = Buffer.alloc(46);
        b.write(this.model, 0, 16, 'latin1');
        b.write('SIM1', 16, 4, 'latin1');
        b.write((this.#options.serial ?? 'SIM00001').slice(0, 8), 20, 8, 'latin1');
        b[28] = 1;
        b[29] = 2;
        b.write('SIMSENS', 30, 8, 'latin1');
        b.writeUInt16BE(IMAGE_WIDTH, 38);
        b.writeUInt16BE(IMAGE_HEIGHT, 40);
        b.writeUInt16BE(CHAR_FILE_BYTES, 42);
        b.writeUInt16BE(this.capacity, 44);
        return this.#ack(0x00, b);
      }
      case I.WriteReg: {
        if (p.length < 2) return this.#ack(0x01);
        const [reg, value] = [p[0]!, p[1]!];
        if (reg === Register.baud) {
          if (value < 1 || value > 12) return this.#ack(0x1b);
          this.#ack(0x00);
          void this.switchBaud(value * 9600);
          return;
        }
        if (reg === Register.securityLevel) {
          if (value < 1 || value > 5) return this.#ack(0x1b);
          this.securityLevel = value;
          return this.#ack(0x00);
        }
        if (reg === Register.packetSize) {
          if (value > 3) return this.#ack(0x1b);
          this.packetSize = PACKET_SIZES[value]!;
          return this.#ack(0x00);
        }
        return this.#ack(0x1a);
      }
      case I.GenImg: {
        const finger = this.presented;
        if (finger === null) return this.#ack(0x02);
        this.#image = { fingerId: finger, impression: this.nextImpression(finger), lowQuality: this.faults.lowQuality };
        return this.#ack(0x00);
      }
      case I.UpImage: {
        if (!this.#image) return this.#ack(0x15);
        this.#ack(0x00);
        return this.#sendData(packNibbles(this.#pixels(this.#image)));
      }
      case I.Img2Tz: {
        const buf = this.#bufferIndex(p[0]);
        if (buf === null) return this.#ack(0x01);
        if (!this.#image) return this.#ack(0x15);
        if (this.#image.lowQuality) return this.#ack(0x07);
        this.#chars[buf] = encodeR30xSimTemplate({ fingerId: this.#image.fingerId, impression: this.#image.impression, kind: 1 });
        return this.#ack(0x00);
      }
      case I.RegModel: {
        const [a, b] = this.#chars;
        const x = decodeR30xSimTemplate(a ?? undefined);
        const y = decodeR30xSimTemplate(b ?? undefined);
        if (!x || !y || x.fingerId !== y.fingerId) return this.#ack(0x0a);
        const merged = encodeR30xSimTemplate({ fingerId: x.fingerId, impression: x.impression * 1000 + y.impression, kind: 2 });
        this.#chars = [merged, Buffer.from(merged)];
        return this.#ack(0x00);
      }
      case I.Store: {
        const buf = this.#bufferIndex(p[0]);
        if (buf === null || p.length < 3) return this.#ack(0x01);
        const slot = p.readUInt16BE(1);
        if (slot >= this.capacity) return this.#ack(0x0b);
        const c = this.#chars[buf];
        if (!c) return this.#ack(0x22);
        this.library.set(slot, Buffer.from(c));
        return this.#ack(0x00);
      }
      case I.LoadChar: {
        const buf = this.#bufferIndex(p[0]);
        if (buf === null || p.length < 3) return this.#ack(0x01);
        const slot = p.readUInt16BE(1);
        if (slot >= this.capacity) return this.#ack(0x0b);
        const t = this.library.get(slot);
        if (!t) return this.#ack(0x0c);
        this.#chars[buf] = Buffer.from(t);
        return this.#ack(0x00);
      }
      case I.UpChar: {
        const buf = this.#bufferIndex(p[0]);
        if (buf === null) return this.#ack(0x01);
        const c = this.#chars[buf];
        if (!c) return this.#ack(0x0d);
        this.#ack(0x00);
        return this.#sendData(c);
      }
      case I.DownChar: {
        const buf = this.#bufferIndex(p[0]);
        if (buf === null) return this.#ack(0x01);
        this.#downChar = { buffer: buf, parts: [] };
        return this.#ack(0x00);
      }
      case I.Search:
      case I.HiSpeedSearch: {
        const buf = this.#bufferIndex(p[0]);
        if (buf === null || p.length < 5) return this.#ack(0x01);
        const start = p.readUInt16BE(1);
        const count = p.readUInt16BE(3);
        if (start >= this.capacity) return this.#ack(0x0b);
        const probe = this.#chars[buf];
        if (!probe) return this.#ack(0x09);
        const end = Math.min(this.capacity, start + count);
        let best = { slot: -1, score: 0 };
        for (const [slot, t] of this.library) {
          if (slot < start || slot >= end) continue;
          const score = r30xSimScore(probe, t);
          if (score > best.score || (score === best.score && score > 0 && slot < best.slot)) best = { slot, score };
        }
        if (best.slot < 0 || best.score < r30xSimThreshold(this.securityLevel)) return this.#ack(0x09);
        const b = Buffer.alloc(4);
        b.writeUInt16BE(best.slot, 0);
        b.writeUInt16BE(best.score, 2);
        return this.#ack(0x00, b);
      }
      case I.Match: {
        const score = r30xSimScore(this.#chars[0] ?? undefined, this.#chars[1] ?? undefined);
        const b = Buffer.alloc(2);
        b.writeUInt16BE(score, 0);
        return this.#ack(score >= r30xSimThreshold(this.securityLevel) ? 0x00 : 0x08, b);
      }
      case I.DeletChar: {
        if (p.length < 4) return this.#ack(0x01);
        const slot = p.readUInt16BE(0);
        const n = p.readUInt16BE(2);
        if (slot >= this.capacity || slot + n > this.capacity) return this.#ack(0x10);
        for (let s = slot; s < slot + n; s++) this.library.delete(s);
        return this.#ack(0x00);
      }
      case I.Empty:
        this.library.clear();
        return this.#ack(0x00);
      case I.TemplateNum: {
        const b = Buffer.alloc(2);
        b.writeUInt16BE(this.library.size, 0);
        return this.#ack(0x00, b);
      }
      case I.ReadIndexTable: {
        const page = p[0] ?? 0;
        if (page > 3) return this.#ack(0x0b);
        const b = Buffer.alloc(32);
        for (const slot of this.library.keys()) {
          const rel = slot - page * 256;
          if (rel >= 0 && rel < 256) b[rel >> 3]! |= 1 << (rel & 7);
        }
        return this.#ack(0x00, b);
      }
      case I.AuraLedConfig: {
        if (!R30X_MODELS[this.model].led) return this.#ack(0xfc);
        if (p.length < 4) return this.#ack(0x01);
        this.led = { control: p[0]!, speed: p[1]!, color: p[2]!, count: p[3]! };
        return this.#ack(0x00);
      }
      default:
        return this.#ack(0xfc);
    }
  }

  // ---------------------------------------------------------------- output

  #bufferIndex(id: number | undefined): 0 | 1 | null {
    return id === 1 ? 0 : id === 2 ? 1 : null;
  }

  #pixels(img: ImageBuffer): Uint8Array {
    return this.picture(this.#options.imageSource, img.fingerId, img.impression, IMAGE_WIDTH, IMAGE_HEIGHT, img.lowQuality);
  }

  #ack(code: number, params: Uint8Array = new Uint8Array(0)): void {
    const payload = Buffer.alloc(1 + params.length);
    payload[0] = code;
    payload.set(params, 1);
    this.send(encodePacket({ address: this.address, pid: PacketId.ack, payload }));
  }

  #sendData(data: Uint8Array): void {
    for (let off = 0; off < data.length; off += this.packetSize) {
      const last = off + this.packetSize >= data.length;
      this.send(encodePacket({ address: this.address, pid: last ? PacketId.end : PacketId.data, payload: data.subarray(off, off + this.packetSize) }));
    }
  }
}
