/**
 * The R30x driver: one method per module command, each a small exchange state machine:
 *
 *   send command ─► await ACK (timeout) ─► [send data packets | receive data packets until END]
 *        ▲                │ timeout / bad checksum / "packet receive error"
 *        └── retry ◄──────┘ (after the line goes quiet), up to `retries` times, then a typed error
 *
 * Exchanges are serialized (one at a time). A disconnect rejects the exchange in flight at once
 * with `TRANSPORT_DISCONNECTED`. Data going out is written in one piece right after the ACK and
 * data coming in is taken as fast as it arrives, so the driver adds no round trips of its own.
 * Timeouts scale with the baud rate: the time the bytes need on the wire plus `timeoutMs`.
 */
import { AgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import { OneAtATime } from '../exchange.js';
import type { ByteTransport } from '../transport/transport.js';
import { DEFAULT_ADDRESS, HEADER_LENGTH, PacketId, encodeCommand, encodeDataPackets, unpackNibbles, type R30xPacket } from './codec.js';
import { R30xParser, type ParseResult } from './parser.js';
import { CHAR_FILE_BYTES, IMAGE_BYTES, IMAGE_HEIGHT, IMAGE_WIDTH, INSTRUCTION_NAMES, Instruction, PACKET_SIZES, Register, statusError } from './protocol.js';

const log = logger('drivers:r30x');

export interface R30xDriverOptions {
  address?: number;
  /** Handshake password (VfyPwd); default 0. */
  password?: number;
  /** Time allowed for the module to start answering, on top of the bytes' wire time (ms). */
  timeoutMs?: number;
  /** Retries after a timeout, a bad checksum or a "packet receive error". */
  retries?: number;
  /** Line speed used to size timeouts; defaults to the transport's own or 57600. */
  baud?: number;
  /** Data packet size in bytes until ReadSysPara says otherwise. */
  packetSize?: number;
}

export interface SystemParameters {
  status: number;
  systemId: number;
  capacity: number;
  securityLevel: number;
  address: number;
  packetSize: number;
  baud: number;
}

export interface ProductInfo {
  model: string;
  batch: string;
  serial: string;
  hardwareVersion: string;
  sensor: string;
  sensorWidth: number;
  sensorHeight: number;
  templateSize: number;
  capacity: number;
}

export interface SearchHit {
  slot: number;
  score: number;
}

export interface ExchangeOptions {
  timeoutMs?: number;
  /** Data packets to send after an OK acknowledgement (DownChar). */
  dataOut?: Uint8Array;
  /** Expect data packets after an OK acknowledgement (UpChar, UpImage); their expected total size. */
  dataIn?: number;
  retries?: number;
}

export interface ExchangeResult {
  code: number;
  /** Acknowledge payload after the confirmation code. */
  params: Buffer;
  data?: Buffer;
}

type Inbox = ParseResult | { ok: false; error: AgentError; fatal: true };

export class R30xDriver {
  readonly transport: ByteTransport;
  readonly address: number;
  readonly password: number;
  readonly timeoutMs: number;
  readonly retries: number;
  #baud: number;
  packetSize: number;
  #parser = new R30xParser();
  #inbox: Inbox[] = [];
  #wake: (() => void) | undefined;
  #lastByteAt = 0;
  readonly #queue = new OneAtATime();
  #gone: AgentError | undefined;

  constructor(transport: ByteTransport, options: R30xDriverOptions = {}) {
    this.transport = transport;
    this.address = options.address ?? DEFAULT_ADDRESS;
    this.password = options.password ?? 0;
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.retries = options.retries ?? 2;
    this.#baud = options.baud ?? (transport as { baud?: number }).baud ?? 57600;
    this.packetSize = options.packetSize ?? 128;
    transport.on('data', (chunk) => {
      this.#lastByteAt = performance.now();
      for (const r of this.#parser.push(chunk)) this.#inbox.push(r);
      this.#wake?.();
    });
    transport.on('disconnect', (err) => {
      this.#gone = err as AgentError;
      this.#wake?.();
    });
  }

  get baud(): number {
    return this.#baud;
  }

  /** Forget a previous disconnect (after the transport was reopened). */
  resetLink(): void {
    this.#gone = undefined;
    this.#inbox = [];
    this.#parser.reset();
  }

  // ---------------------------------------------------------------- commands

  async verifyPassword(password = this.password): Promise<void> {
    await this.#ok(Instruction.VfyPwd, u32(password));
  }

  async readSystemParameters(options: { timeoutMs?: number; retries?: number } = {}): Promise<SystemParameters> {
    const { params } = await this.#ok(Instruction.ReadSysPara, undefined, options);
    if (params.length < 16) throw protocolError('ReadSysPara', `expected 16 parameter bytes, got ${params.length}`);
    const sizeCode = params.readUInt16BE(12);
    const p: SystemParameters = {
      status: params.readUInt16BE(0),
      systemId: params.readUInt16BE(2),
      capacity: params.readUInt16BE(4),
      securityLevel: params.readUInt16BE(6),
      address: params.readUInt32BE(8),
      packetSize: PACKET_SIZES[sizeCode] ?? 128,
      baud: params.readUInt16BE(14) * 9600,
    };
    this.packetSize = p.packetSize;
    return p;
  }

  /** R503 and later: model, serial, sensor and library size. Fails with UNSUPPORTED_COMMAND (or a timeout) on older modules. */
  async readProductInfo(options: { timeoutMs?: number; retries?: number } = {}): Promise<ProductInfo> {
    const { params } = await this.#ok(Instruction.ReadProdInfo, undefined, options);
    if (params.length < 46) throw protocolError('ReadProdInfo', `expected 46 bytes, got ${params.length}`);
    return {
      model: ascii(params.subarray(0, 16)),
      batch: ascii(params.subarray(16, 20)),
      serial: ascii(params.subarray(20, 28)),
      hardwareVersion: `${params[28]}.${params[29]}`,
      sensor: ascii(params.subarray(30, 38)),
      sensorWidth: params.readUInt16BE(38),
      sensorHeight: params.readUInt16BE(40),
      templateSize: params.readUInt16BE(42),
      capacity: params.readUInt16BE(44),
    };
  }

  async writeRegister(register: number, value: number): Promise<void> {
    await this.#ok(Instruction.WriteReg, Uint8Array.of(register, value));
  }

  /** Switches the module and then the transport to `baud` (9600 × N, N = 1..12). */
  async setBaud(baud: number): Promise<void> {
    const n = baud / 9600;
    if (!Number.isInteger(n) || n < 1 || n > 12) {
      throw new AgentError('DRIVER_BAD_ARGUMENT', `R30x baud rates are 9600 × 1..12, not ${baud}`, { baud }, { hint: 'use 9600, 19200, 38400, 57600 or 115200' });
    }
    await this.writeRegister(Register.baud, n);
    this.#baud = baud;
    await this.transport.setBaudRate?.(baud);
  }

  async setSecurityLevel(level: number): Promise<void> {
    if (!Number.isInteger(level) || level < 1 || level > 5) throw new AgentError('DRIVER_BAD_ARGUMENT', `security level is 1..5, not ${level}`, { level });
    await this.writeRegister(Register.securityLevel, level);
  }

  async setPacketSize(bytes: number): Promise<void> {
    const code = (PACKET_SIZES as readonly number[]).indexOf(bytes);
    if (code < 0) throw new AgentError('DRIVER_BAD_ARGUMENT', `packet size is 32, 64, 128 or 256, not ${bytes}`, { bytes });
    await this.writeRegister(Register.packetSize, code);
    this.packetSize = bytes;
  }

  /** Takes an image of the finger on the sensor; `DRIVER_R30X_NO_FINGER` when there is none. */
  async genImg(): Promise<void> {
    await this.#ok(Instruction.GenImg, undefined, { retries: this.retries });
  }

  /** True when a finger is on the sensor (an image was taken), false when not. */
  async fingerPresent(): Promise<boolean> {
    const r = await this.exchange(Instruction.GenImg);
    if (r.code === 0) return true;
    if (r.code === 0x02) return false;
    throw statusError(r.code, Instruction.GenImg);
  }

  async img2Tz(buffer: 1 | 2): Promise<void> {
    await this.#ok(Instruction.Img2Tz, Uint8Array.of(buffer));
  }

  async regModel(): Promise<void> {
    await this.#ok(Instruction.RegModel);
  }

  async store(buffer: 1 | 2, slot: number): Promise<void> {
    await this.#ok(Instruction.Store, Uint8Array.of(buffer, ...u16(slot)), { context: { slot } });
  }

  async loadChar(buffer: 1 | 2, slot: number): Promise<void> {
    await this.#ok(Instruction.LoadChar, Uint8Array.of(buffer, ...u16(slot)), { context: { slot } });
  }

  async upChar(buffer: 1 | 2): Promise<Buffer> {
    const r = await this.#ok(Instruction.UpChar, Uint8Array.of(buffer), { dataIn: CHAR_FILE_BYTES });
    return r.data!;
  }

  async downChar(buffer: 1 | 2, data: Uint8Array): Promise<void> {
    if (data.length === 0 || data.length > 4096) throw new AgentError('DRIVER_BAD_ARGUMENT', `a character file is 1..4096 bytes, got ${data.length}`, { bytes: data.length });
    await this.#ok(Instruction.DownChar, Uint8Array.of(buffer), { dataOut: data });
  }

  /** The image in the module's buffer: 256×288, sent 4 bits a pixel, returned widened to 8 bits. */
  async upImage(): Promise<{ width: number; height: number; pixels: Uint8Array; raw: Buffer }> {
    const r = await this.#ok(Instruction.UpImage, undefined, { dataIn: IMAGE_BYTES });
    const raw = r.data!;
    if (raw.length !== IMAGE_BYTES) throw protocolError('UpImage', `expected ${IMAGE_BYTES} image bytes, got ${raw.length}`);
    return { width: IMAGE_WIDTH, height: IMAGE_HEIGHT, pixels: unpackNibbles(raw, IMAGE_WIDTH * IMAGE_HEIGHT), raw };
  }

  /** Searches slots [start, start+count) for the character file in `buffer`; null when not found. */
  async search(buffer: 1 | 2, start: number, count: number, options: { hiSpeed?: boolean } = {}): Promise<SearchHit | null> {
    const instr = options.hiSpeed ? Instruction.HiSpeedSearch : Instruction.Search;
    const r = await this.exchange(instr, Uint8Array.of(buffer, ...u16(start), ...u16(count)), { timeoutMs: this.timeoutMs + count });
    if (r.code === 0x09) return null;
    if (r.code !== 0) throw statusError(r.code, instr, { start, count });
    if (r.params.length < 4) throw protocolError(INSTRUCTION_NAMES.get(instr)!, 'short search answer');
    return { slot: r.params.readUInt16BE(0), score: r.params.readUInt16BE(2) };
  }

  /** Compares CharBuffer1 with CharBuffer2: the score, or null when they do not match. */
  async match(): Promise<number | null> {
    const r = await this.exchange(Instruction.Match);
    if (r.code === 0x08) return null;
    if (r.code !== 0) throw statusError(r.code, Instruction.Match);
    return r.params.length >= 2 ? r.params.readUInt16BE(0) : 0;
  }

  async deleteChar(slot: number, count = 1): Promise<void> {
    await this.#ok(Instruction.DeletChar, Uint8Array.of(...u16(slot), ...u16(count)), { context: { slot, count } });
  }

  async empty(): Promise<void> {
    await this.#ok(Instruction.Empty);
  }

  async templateCount(): Promise<number> {
    const { params } = await this.#ok(Instruction.TemplateNum);
    if (params.length < 2) throw protocolError('TemplateNum', 'short answer');
    return params.readUInt16BE(0);
  }

  /** Used slots on index page `page` (slots page×256 .. page×256+255). */
  async readIndexTable(page: number): Promise<number[]> {
    const { params } = await this.#ok(Instruction.ReadIndexTable, Uint8Array.of(page));
    const slots: number[] = [];
    for (let i = 0; i < Math.min(32, params.length); i++) {
      for (let bit = 0; bit < 8; bit++) if (params[i]! & (1 << bit)) slots.push(page * 256 + i * 8 + bit);
    }
    return slots;
  }

  /** R503 ring LED: control (LedControl), speed 0..255, colour (LedColor), count (0 = forever). */
  async auraLed(control: number, speed: number, color: number, count: number): Promise<void> {
    await this.#ok(Instruction.AuraLedConfig, Uint8Array.of(control, speed, color, count));
  }

  // ---------------------------------------------------------------- exchange engine

  async #ok(instruction: number, params?: Uint8Array, options: ExchangeOptions & { context?: Record<string, unknown> } = {}): Promise<ExchangeResult> {
    const r = await this.exchange(instruction, params, options);
    if (r.code !== 0) throw statusError(r.code, instruction, options.context);
    return r;
  }

  /** One command exchange; resolves with the confirmation code (non-zero codes are not thrown). */
  exchange(instruction: number, params: Uint8Array = new Uint8Array(0), options: ExchangeOptions = {}): Promise<ExchangeResult> {
    return this.#queue.run(() => this.#run(instruction, params, options));
  }

  async #run(instruction: number, params: Uint8Array, options: ExchangeOptions): Promise<ExchangeResult> {
    const name = INSTRUCTION_NAMES.get(instruction) ?? `0x${instruction.toString(16)}`;
    const retries = options.retries ?? this.retries;
    const command = encodeCommand(instruction, params, this.address);
    let lastError: AgentError | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) {
        log.debug({ op: name, attempt, error: lastError?.code }, 'retrying R30x exchange');
        await this.#quiet();
      }
      this.#inbox = [];
      this.#parser.reset();
      try {
        this.#checkGone();
        await this.transport.write(command);
        // Command and acknowledgement (12 bytes + parameters) on the wire, then the module's own time.
        const ack = await this.#awaitPacket(name, (p) => p.pid === PacketId.ack, (options.timeoutMs ?? this.timeoutMs) + this.#wireMs(command.length + 64));
        if (ack.payload.length < 1) throw protocolError(name, 'empty acknowledgement');
        const code = ack.payload[0]!;
        const result: ExchangeResult = { code, params: ack.payload.subarray(1) };
        if (code === 0x01 && attempt < retries) {
          lastError = statusError(code, instruction);
          continue;
        }
        if (code !== 0) return result;
        if (options.dataOut) {
          await this.transport.write(encodeDataPackets(options.dataOut, this.packetSize, this.address));
        }
        if (options.dataIn !== undefined) result.data = await this.#receiveData(name, options.dataIn);
        return result;
      } catch (err) {
        const e = err as AgentError;
        if (e.code === 'TRANSPORT_DISCONNECTED' || e.code === 'TRANSPORT_CLOSED' || !e.retryable || attempt >= retries) throw e;
        lastError = e;
      }
    }
    throw lastError!;
  }

  async #receiveData(name: string, expected: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    let got = 0;
    // Between packets allow the wire time of one full packet plus the module's time.
    const gapMs = this.timeoutMs + this.#wireMs(this.packetSize + HEADER_LENGTH + 2);
    while (true) {
      const p = await this.#awaitPacket(name, (q) => q.pid === PacketId.data || q.pid === PacketId.end, gapMs, () => `after ${got} of ${expected} bytes`);
      parts.push(p.payload);
      got += p.payload.length;
      if (p.pid === PacketId.end) return Buffer.concat(parts);
      if (got > expected * 4) throw protocolError(name, `more than ${expected * 4} bytes of data without an end packet`);
    }
  }

  /** Waits for the next packet matching `want` (others are stale answers and skipped). */
  async #awaitPacket(name: string, want: (p: R30xPacket) => boolean, timeoutMs: number, progress?: () => string): Promise<R30xPacket> {
    const deadline = performance.now() + timeoutMs;
    while (true) {
      this.#checkGone();
      const item = this.#inbox.shift();
      if (item) {
        if (!item.ok) throw item.error;
        if (item.packet.address !== this.address) continue;
        if (want(item.packet)) return item.packet;
        continue;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new AgentError('DRIVER_TIMEOUT', `no answer from the R30x module to ${name} within ${Math.round(timeoutMs)} ms${progress ? ` (${progress()})` : ''}`, { op: name, timeoutMs: Math.round(timeoutMs), baud: this.#baud, path: this.transport.path }, {
          hint: 'check that the module is powered and wired TX↔RX, and that the baud rate matches ("edge-agent devices" finds it)',
          retryable: true,
        });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.#wake = () => {
          this.#wake = undefined;
          done();
        };
      });
    }
  }

  /** Waits until no byte arrived for a while (the rest of a broken answer), at most 2 s. */
  async #quiet(): Promise<void> {
    const gap = Math.max(20, this.#wireMs(this.packetSize + HEADER_LENGTH + 2) * 2);
    const until = performance.now() + 2000;
    while (performance.now() < until) {
      this.#checkGone();
      const since = performance.now() - this.#lastByteAt;
      if (since >= gap) return;
      await new Promise((r) => setTimeout(r, gap - since));
    }
  }

  #checkGone(): void {
    if (this.#gone) throw this.#gone;
  }

  #wireMs(bytes: number): number {
    return (bytes * 10 * 1000) / this.#baud;
  }
}

function u16(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}

function u32(n: number): Uint8Array {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function ascii(b: Uint8Array): string {
  return Buffer.from(b).toString('latin1').replace(/\0+$/, '').trim();
}

function protocolError(op: string, detail: string): AgentError {
  return new AgentError('DRIVER_PROTOCOL', `unexpected R30x answer to ${op}: ${detail}`, { op }, { hint: 'the device on this port may not be an R30x module; run "edge-agent devices" to identify it', retryable: true });
}
