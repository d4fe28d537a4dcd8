/**
 * The GT-521 exchange state machine, over any ByteTransport. One exchange at a time:
 *
 *   send command ─► await-ack ─┬─ NACK ─────────────────────────► fail (named NACK error)
 *                              ├─ ACK, host has data ─► send data ─► await-final ─► ACK/NACK
 *                              ├─ ACK, module sends data ─► await-data ─► data packet ─► done
 *                              └─ ACK ─► done
 *
 * A bad checksum or a timeout fails the attempt; commands that are safe to repeat are retried
 * (after the line settles and the parser is reset), others fail at once. A transport disconnect
 * fails the exchange at once with `TRANSPORT_DISCONNECTED`, never a hang. The timeout of an
 * exchange is the base timeout plus the module's work time plus the time the bytes need on the
 * wire at the current baud rate.
 *
 * Tested in test/unit/drivers/gt521/driver.test.ts (the driver's exchanges: NACKs, retries,
 * timeouts, data packets) and test/unit/drivers/gt521/gt521-serial.test.ts (the same over a serial
 * line, an unplug in the middle of GetImage).
 */
import { AgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import { sleep } from '../../src/core/time.js';
import type { ByteTransport } from '../transport/transport.js';
import { encodeData, encodePacket, type Gt521DataPacket, type Gt521Packet } from './codec.js';
import { Gt521NackError, timeoutError } from './errors.js';
import { Gt521Parser } from './parser.js';
import { awaitAnswer, OneAtATime, type Answer } from '../exchange.js';
import { ACK, commandName, DATA_OVERHEAD, DEFAULT_BAUD, DEFAULT_DEVICE_ID, NACK, PACKET_SIZE } from './protocol.js';

const log = logger('drivers:gt521');

export interface ExchangeRequest {
  command: number;
  parameter?: number;
  /** Data the host sends once the module has ACKed the command (SetTemplate, VerifyTemplate, ...). */
  sendData?: Uint8Array;
  /** Payload length of the data packet the module sends after its ACK. */
  receiveData?: number;
  /** Time the module itself needs (capture, search), added to the timeout. */
  workMs?: number;
  /** Safe to send again after a checksum error or a timeout. */
  retryable?: boolean;
}

export interface ExchangeResult {
  /** The ACK's output parameter. */
  parameter: number;
  data: Buffer | null;
}

export interface Gt521LinkOptions {
  /** Base timeout of one exchange attempt (ms), before wire time and module work. Default 1000. */
  timeoutMs?: number;
  /** Extra attempts for retryable commands. Default 2. */
  retries?: number;
  /** Line speed, for the wire-time part of timeouts. Default 9600. */
  baud?: number;
  deviceId?: number;
  /** Quiet time before a retry, letting a late or corrupted reply finish (ms). Default 30. */
  settleMs?: number;
}

type Stage = 'await-ack' | 'await-final' | 'await-data';

interface Pending {
  req: ExchangeRequest;
  stage: Stage;
  parameter: number;
  answer: Answer<ExchangeResult>;
}

/** Bits on the wire for one byte: start, 8 data, stop. */
export const BITS_PER_BYTE = 10;

export function wireMs(bytes: number, baud: number): number {
  return (bytes * BITS_PER_BYTE * 1000) / baud;
}

/** Bytes both ways for one exchange (for timeouts and the link floor). */
export function exchangeBytes(req: ExchangeRequest): number {
  let n = 2 * PACKET_SIZE;
  if (req.sendData) n += req.sendData.length + DATA_OVERHEAD + PACKET_SIZE;
  if (req.receiveData !== undefined) n += req.receiveData + DATA_OVERHEAD;
  return n;
}

export class Gt521Link {
  readonly transport: ByteTransport;
  baud: number;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly deviceId: number;
  readonly settleMs: number;
  /** Frames that arrived while no exchange was waiting (late replies, noise). */
  strayFrames = 0;

  readonly #parser: Gt521Parser;
  #pending: Pending | null = null;
  readonly #queue = new OneAtATime();
  #lostError: Error | null = null;
  /** Never throws from the transport's listener: a frame the link cannot take fails the exchange waiting for it. */
  readonly #onData = (chunk: Buffer) => {
    try {
      this.#parser.push(chunk);
    } catch (err) {
      this.#parser.reset();
      this.#fail(
        err instanceof AgentError
          ? err
          : new AgentError(
              'DRIVER_FRAME',
              `GT-521 stream could not be read: ${(err as Error).message}`,
              { family: 'gt521' },
              { cause: err },
            ),
      );
    }
  };
  readonly #onDisconnect = (err: Error) => {
    this.#lostError = err;
    const p = this.#pending;
    this.#pending = null;
    p?.answer.reject(err);
  };

  constructor(transport: ByteTransport, options: Gt521LinkOptions = {}) {
    this.transport = transport;
    this.baud = options.baud ?? DEFAULT_BAUD;
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.retries = options.retries ?? 2;
    this.deviceId = options.deviceId ?? DEFAULT_DEVICE_ID;
    this.settleMs = options.settleMs ?? 30;
    this.#parser = new Gt521Parser({
      packet: (p) => this.#onPacket(p),
      data: (d) => this.#onDataPacket(d),
      error: (e) => this.#fail(e),
    });
    transport.on('data', this.#onData);
    transport.on('disconnect', this.#onDisconnect);
  }

  /** Stops listening to the transport (the transport itself stays as it is). */
  detach(): void {
    this.transport.off('data', this.#onData);
    this.transport.off('disconnect', this.#onDisconnect);
    const p = this.#pending;
    this.#pending = null;
    p?.answer.reject(new AgentError('DRIVER_CLOSED', 'the GT-521 driver was closed during an exchange', { family: 'gt521' }));
  }

  /** Forgets an earlier disconnect (after the transport was reopened). */
  resetConnection(): void {
    this.#lostError = null;
    this.#parser.reset();
  }

  /** Runs one exchange, queued behind any running one. */
  exchange(req: ExchangeRequest): Promise<ExchangeResult> {
    return this.#queue.run(() => this.#run(req));
  }

  async #run(req: ExchangeRequest): Promise<ExchangeResult> {
    const attempts = 1 + (req.retryable ? this.retries : 0);
    let lastErr: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) {
        await sleep(this.settleMs * attempt);
        log.debug({ command: commandName(req.command), attempt, err: (lastErr as Error).message }, 'retrying exchange');
      }
      try {
        return await this.#attempt(req);
      } catch (err) {
        lastErr = err;
        const code = (err as AgentError).code;
        if (code !== 'DRIVER_CHECKSUM' && code !== 'DRIVER_TIMEOUT') throw err;
      }
    }
    throw lastErr;
  }

  #attempt(req: ExchangeRequest): Promise<ExchangeResult> {
    if (this.#lostError) return Promise.reject(this.#lostError);
    const ms = Math.ceil(this.timeoutMs + (req.workMs ?? 0) + 1.5 * wireMs(exchangeBytes(req), this.baud));
    this.#parser.reset();
    this.#parser.expectedDataLength = null;
    const pending: Pending = {
      req,
      stage: 'await-ack',
      parameter: 0,
      answer: awaitAnswer(ms, () => {
        if (this.#pending === pending) this.#pending = null;
        return timeoutError(req.command, ms, this.transport.path, pending.stage === 'await-data' ? 'data' : 'reply');
      }),
    };
    this.#pending = pending;
    this.transport.write(encodePacket({ deviceId: this.deviceId, parameter: req.parameter ?? 0, code: req.command })).catch((err) => {
      if (this.#pending === pending) this.#pending = null;
      pending.answer.reject(err);
    });
    return pending.answer.promise;
  }

  #onPacket(packet: Gt521Packet): void {
    const p = this.#pending;
    if (!p || p.stage === 'await-data' || (packet.code !== ACK && packet.code !== NACK)) {
      this.strayFrames++;
      return;
    }
    if (packet.code === NACK) {
      this.#pending = null;
      p.answer.reject(new Gt521NackError(packet.parameter, p.req.command));
      return;
    }
    p.parameter = packet.parameter;
    if (p.stage === 'await-ack' && p.req.sendData) {
      p.stage = 'await-final';
      this.transport.write(encodeData(p.req.sendData, this.deviceId)).catch((err) => {
        if (this.#pending === p) this.#pending = null;
        p.answer.reject(err);
      });
      return;
    }
    if (p.req.receiveData !== undefined) {
      p.stage = 'await-data';
      this.#parser.expectedDataLength = p.req.receiveData;
      return;
    }
    this.#pending = null;
    p.answer.resolve({ parameter: packet.parameter, data: null });
  }

  #onDataPacket(data: Gt521DataPacket): void {
    const p = this.#pending;
    if (p?.stage !== 'await-data') {
      this.strayFrames++;
      return;
    }
    this.#pending = null;
    p.answer.resolve({ parameter: p.parameter, data: data.data });
  }

  #fail(err: AgentError): void {
    const p = this.#pending;
    if (!p) {
      this.strayFrames++;
      return;
    }
    this.#pending = null;
    p.answer.reject(err);
  }
}
