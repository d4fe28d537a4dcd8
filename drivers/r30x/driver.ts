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
import {
  DEFAULT_ADDRESS,
  HEADER_LENGTH,
  PacketId,
  decodeAck,
  encodeCommand,
  encodeDataPackets,
  unpackNibbles,
  type R30xPacket,
} from './codec.js';
import {
  protocolError,
  R30x,
  type CharBuffer,
  type ProductInfo,
  type R30xCommand,
  type SearchHit,
  type SystemParameters,
} from './commands.js';
import { R30xParser, type ParseResult } from './parser.js';
import { IMAGE_BYTES, IMAGE_HEIGHT, IMAGE_WIDTH, INSTRUCTION_NAMES, Instruction, PACKET_SIZES, Register, statusError } from './protocol.js';

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

export type { ProductInfo, SearchHit, SystemParameters } from './commands.js';

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

/**
 * Packets kept for the exchange to take: far more than the largest answer (UpImage at 32-byte
 * packets is 1,153), far less than memory to worry about (each at most 523 bytes).
 */
const MAX_INBOX = 4096;

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
    // The data listener never throws, and what waits for an exchange is bounded: a module that
    // talks when nobody asked cannot grow the inbox without end (the oldest packets go first).
    transport.on('data', (chunk) => {
      this.#lastByteAt = performance.now();
      try {
        for (const r of this.#parser.push(chunk)) this.#inbox.push(r);
      } catch (err) {
        this.#parser.reset();
        this.#inbox.push({ ok: false, error: err instanceof AgentError ? err : protocolError('the stream', (err as Error).message) });
      }
      if (this.#inbox.length > MAX_INBOX) {
        log.debug({ dropped: this.#inbox.length - MAX_INBOX }, 'dropping unasked-for R30x packets');
        this.#inbox.splice(0, this.#inbox.length - MAX_INBOX);
      }
      this.#wake?.();
    });
    transport.on('disconnect', (err) => {
      this.#gone = err as AgentError;
      this.#wake?.();
    });
  }

  /** Packets received and not yet taken by an exchange (bounded; for diagnostics and tests). */
  get waiting(): number {
    return this.#inbox.length;
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
    await this.#ok(R30x.VfyPwd, { password });
  }

  async readSystemParameters(options: { timeoutMs?: number; retries?: number } = {}): Promise<SystemParameters> {
    const { response } = await this.#ok(R30x.ReadSysPara, {}, options);
    this.packetSize = response.packetSize;
    return response;
  }

  /** R503 and later: model, serial, sensor and library size. Fails with UNSUPPORTED_COMMAND (or a timeout) on older modules. */
  async readProductInfo(options: { timeoutMs?: number; retries?: number } = {}): Promise<ProductInfo> {
    return (await this.#ok(R30x.ReadProdInfo, {}, options)).response;
  }

  async writeRegister(register: number, value: number): Promise<void> {
    await this.#ok(R30x.WriteReg, { register, value });
  }

  /** Switches the module and then the transport to `baud` (9600 × N, N = 1..12). */
  async setBaud(baud: number): Promise<void> {
    const n = baud / 9600;
    if (!Number.isInteger(n) || n < 1 || n > 12) {
      throw new AgentError(
        'DRIVER_BAD_ARGUMENT',
        `R30x baud rates are 9600 × 1..12, not ${baud}`,
        { baud },
        { hint: 'use 9600, 19200, 38400, 57600 or 115200' },
      );
    }
    await this.writeRegister(Register.baud, n);
    this.#baud = baud;
    await this.transport.setBaudRate?.(baud);
  }

  async setSecurityLevel(level: number): Promise<void> {
    if (!Number.isInteger(level) || level < 1 || level > 5)
      throw new AgentError('DRIVER_BAD_ARGUMENT', `security level is 1..5, not ${level}`, { level });
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
    await this.#ok(R30x.GenImg, {}, { retries: this.retries });
  }

  /** True when a finger is on the sensor (an image was taken), false when not. */
  async fingerPresent(): Promise<boolean> {
    const r = await this.#call(R30x.GenImg, {});
    if (r.code === 0) return true;
    if (r.code === 0x02) return false;
    throw statusError(r.code, Instruction.GenImg);
  }

  async img2Tz(buffer: CharBuffer): Promise<void> {
    await this.#ok(R30x.Img2Tz, { buffer });
  }

  async regModel(): Promise<void> {
    await this.#ok(R30x.RegModel, {});
  }

  async store(buffer: CharBuffer, slot: number): Promise<void> {
    await this.#ok(R30x.Store, { buffer, slot }, { context: { slot } });
  }

  async loadChar(buffer: CharBuffer, slot: number): Promise<void> {
    await this.#ok(R30x.LoadChar, { buffer, slot }, { context: { slot } });
  }

  async upChar(buffer: CharBuffer): Promise<Buffer> {
    return (await this.#ok(R30x.UpChar, { buffer })).data!;
  }

  async downChar(buffer: CharBuffer, data: Uint8Array): Promise<void> {
    if (data.length === 0 || data.length > 4096)
      throw new AgentError('DRIVER_BAD_ARGUMENT', `a character file is 1..4096 bytes, got ${data.length}`, { bytes: data.length });
    await this.#ok(R30x.DownChar, { buffer }, { dataOut: data });
  }

  /** The image in the module's buffer: 256×288, sent 4 bits a pixel, returned widened to 8 bits. */
  async upImage(): Promise<{ width: number; height: number; pixels: Uint8Array; raw: Buffer }> {
    const raw = (await this.#ok(R30x.UpImage, {})).data!;
    if (raw.length !== IMAGE_BYTES) throw protocolError('UpImage', `expected ${IMAGE_BYTES} image bytes, got ${raw.length}`);
    return { width: IMAGE_WIDTH, height: IMAGE_HEIGHT, pixels: unpackNibbles(raw, IMAGE_WIDTH * IMAGE_HEIGHT), raw };
  }

  /** Searches slots [start, start+count) for the character file in `buffer`; null when not found. */
  async search(buffer: CharBuffer, start: number, count: number, options: { hiSpeed?: boolean } = {}): Promise<SearchHit | null> {
    const cmd = options.hiSpeed ? R30x.HiSpeedSearch : R30x.Search;
    const r = await this.#call(cmd, { buffer, start, count }, { timeoutMs: this.timeoutMs + count });
    if (r.code === 0x09) return null;
    if (r.code !== 0) throw statusError(r.code, cmd.instruction, { start, count });
    return r.response!;
  }

  /** Compares CharBuffer1 with CharBuffer2: the score, or null when they do not match. */
  async match(): Promise<number | null> {
    const r = await this.#call(R30x.Match, {});
    if (r.code === 0x08) return null;
    if (r.code !== 0) throw statusError(r.code, Instruction.Match);
    return r.response!.score;
  }

  async deleteChar(slot: number, count = 1): Promise<void> {
    await this.#ok(R30x.DeletChar, { slot, count }, { context: { slot, count } });
  }

  async empty(): Promise<void> {
    await this.#ok(R30x.Empty, {});
  }

  async templateCount(): Promise<number> {
    return (await this.#ok(R30x.TemplateNum, {})).response.count;
  }

  /** Used slots on index page `page` (slots page×256 .. page×256+255). */
  async readIndexTable(page: number): Promise<number[]> {
    return (await this.#ok(R30x.ReadIndexTable, { page })).response.slots;
  }

  /** R503 ring LED: control (LedControl), speed 0..255, colour (LedColor), count (0 = forever). */
  async auraLed(control: number, speed: number, color: number, count: number): Promise<void> {
    await this.#ok(R30x.AuraLedConfig, { control, speed, color, count });
  }

  // ---------------------------------------------------------------- exchange engine

  /** One command through its codec: the confirmation code and, when it is 0, the decoded answer. */
  async #call<Req, Res>(
    cmd: R30xCommand<Req, Res>,
    req: Req,
    options: ExchangeOptions = {},
  ): Promise<{ code: number; response: Res | null; data?: Buffer }> {
    const dataIn = cmd.data?.direction === 'in' ? cmd.data.bytes : undefined;
    const r = await this.exchange(cmd.instruction, cmd.encodeRequest(req), { ...(dataIn !== undefined ? { dataIn } : {}), ...options });
    return { code: r.code, response: r.code === 0 ? cmd.decodeResponse(r.params, req) : null, ...(r.data ? { data: r.data } : {}) };
  }

  /** As #call, and a non-zero confirmation code is thrown as its named error. */
  async #ok<Req, Res>(
    cmd: R30xCommand<Req, Res>,
    req: Req,
    options: ExchangeOptions & { context?: Record<string, unknown> } = {},
  ): Promise<{ response: Res; data?: Buffer }> {
    const { context, ...exchange } = options;
    const r = await this.#call(cmd, req, exchange);
    if (r.code !== 0) throw statusError(r.code, cmd.instruction, context);
    return { response: r.response!, ...(r.data ? { data: r.data } : {}) };
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
        const ack = await this.#awaitPacket(
          name,
          (p) => p.pid === PacketId.ack,
          (options.timeoutMs ?? this.timeoutMs) + this.#wireMs(command.length + 64),
        );
        const answer = decodeAck(ack);
        if (!answer) throw protocolError(name, 'empty acknowledgement');
        const { code } = answer;
        const result: ExchangeResult = answer;
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
      const p = await this.#awaitPacket(
        name,
        (q) => q.pid === PacketId.data || q.pid === PacketId.end,
        gapMs,
        () => `after ${got} of ${expected} bytes`,
      );
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
        throw new AgentError(
          'DRIVER_TIMEOUT',
          `no answer from the R30x module to ${name} within ${Math.round(timeoutMs)} ms${progress ? ` (${progress()})` : ''}`,
          { op: name, timeoutMs: Math.round(timeoutMs), baud: this.#baud, path: this.transport.path },
          {
            hint: 'check that the module is powered and wired TX↔RX, and that the baud rate matches ("edge-agent devices" finds it)',
            retryable: true,
          },
        );
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
