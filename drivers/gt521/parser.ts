/**
 * GT-521 stream parser: finds frames in a byte stream split anywhere, skips garbage up to the
 * next start code, and rejects frames whose checksum is wrong. After a bad frame it rescans the
 * frame's bytes from its second byte, so a real frame hidden behind a false start code is found.
 *
 * Data packets carry no length: the owner sets `expectedDataLength` (from the command it sent or
 * received) before the data can arrive. Handlers run synchronously as each frame completes, so a
 * handler may set the expectation for the very next frame (an ACK followed by its data).
 */
import type { AgentError } from '../../src/core/errors.js';
import { decodeData, decodePacket, type Gt521DataPacket, type Gt521Packet } from './codec.js';
import { CMD_START, DATA_OVERHEAD, DATA_START, PACKET_SIZE } from './protocol.js';

export interface Gt521ParserHandlers {
  packet(packet: Gt521Packet): void;
  data(data: Gt521DataPacket): void;
  /** A frame with a bad checksum (AgentError `DRIVER_CHECKSUM`); parsing goes on. */
  error(err: AgentError): void;
}

export class Gt521Parser {
  /** Payload length of the next data packet, or null when no data packet is expected. */
  expectedDataLength: number | null = null;
  /** Bytes skipped as garbage since creation or `reset()`. */
  garbageBytes = 0;
  /** Frames rejected for their checksum since creation or `reset()`. */
  badFrames = 0;

  readonly #handlers: Gt521ParserHandlers;
  #frame: Buffer | null = null;
  #kind: 'packet' | 'data' = 'packet';
  #filled = 0;
  /** A possible first start byte seen at the end of the previous input, or -1. */
  #prev = -1;

  constructor(handlers: Gt521ParserHandlers) {
    this.#handlers = handlers;
  }

  /** True while a frame is partly received. */
  get inFrame(): boolean {
    return this.#frame !== null;
  }

  reset(): void {
    this.#frame = null;
    this.#filled = 0;
    this.#prev = -1;
    this.garbageBytes = 0;
    this.badFrames = 0;
  }

  push(chunk: Uint8Array): void {
    const queue: Uint8Array[] = [chunk];
    while (queue.length > 0) {
      const buf = queue.shift()!;
      let i = 0;
      while (i < buf.length) {
        if (this.#frame) {
          const n = Math.min(this.#frame.length - this.#filled, buf.length - i);
          this.#frame.set(buf.subarray(i, i + n), this.#filled);
          this.#filled += n;
          i += n;
          if (this.#filled === this.#frame.length) {
            const rescan = this.#complete();
            if (rescan) {
              queue.unshift(rescan, buf.subarray(i));
              break;
            }
          }
          continue;
        }
        const b = buf[i++]!;
        if (this.#prev === CMD_START[0] && b === CMD_START[1]) {
          this.#start('packet', PACKET_SIZE, CMD_START);
        } else if (this.#prev === DATA_START[0] && b === DATA_START[1] && this.expectedDataLength !== null) {
          this.#start('data', this.expectedDataLength + DATA_OVERHEAD, DATA_START);
        } else {
          if (this.#prev !== -1) this.garbageBytes++;
          this.#prev = b;
        }
      }
    }
  }

  #start(kind: 'packet' | 'data', length: number, startCode: readonly [number, number]): void {
    this.#kind = kind;
    this.#frame = Buffer.alloc(length);
    this.#frame[0] = startCode[0];
    this.#frame[1] = startCode[1];
    this.#filled = 2;
    this.#prev = -1;
  }

  /** Finishes the current frame; returns bytes to rescan when the frame was bad. */
  #complete(): Buffer | null {
    const frame = this.#frame!;
    const kind = this.#kind;
    this.#frame = null;
    this.#filled = 0;
    let packet: Gt521Packet | null = null;
    let data: Gt521DataPacket | null = null;
    try {
      if (kind === 'packet') packet = decodePacket(frame);
      else data = decodeData(frame);
    } catch (err) {
      if ((err as AgentError).code !== 'DRIVER_CHECKSUM') throw err;
      this.badFrames++;
      this.garbageBytes++;
      this.#handlers.error(err as AgentError);
      return frame.subarray(1);
    }
    if (packet) this.#handlers.packet(packet);
    if (data) {
      this.expectedDataLength = null;
      this.#handlers.data(data);
    }
    return null;
  }
}
