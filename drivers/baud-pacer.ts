/**
 * Paces a simulator's outgoing bytes at the speed a UART at `baud` allows (10 bits a byte: start,
 * 8 data, stop), so a simulated module is exactly as slow as the real one on a pseudo-terminal or
 * an in-memory pair. Writes are queued in order; each chunk goes out, then the pacer waits until
 * the wire would have carried it (absolute deadlines: timer lateness does not accumulate).
 *
 * `cut` lets a fault switch stop the line after a given number of further bytes (an unplugged
 * cable in the middle of a transfer).
 */
import { sleep } from '../src/core/time.js';

export interface PacedSink {
  write(data: Uint8Array): Promise<void>;
}

export interface BaudPacerOptions {
  /** Line speed; null sends at once (no pacing). */
  baud: number | null;
  /** Milliseconds of wire time per chunk (default 8). */
  sliceMs?: number;
}

export class BaudPacer {
  baud: number | null;
  readonly sliceMs: number;
  /** Bytes sent since creation. */
  bytesSent = 0;
  #sink: PacedSink;
  #chain: Promise<void> = Promise.resolve();
  /** When the line is free again (performance.now() ms). */
  #freeAt = 0;
  #cutAfter: number | null = null;
  #onCut: (() => void) | null = null;
  #stopped = false;

  constructor(sink: PacedSink, options: BaudPacerOptions) {
    this.#sink = sink;
    this.baud = options.baud;
    this.sliceMs = options.sliceMs ?? 8;
  }

  /** Stops the line after `bytes` more bytes and calls `onCut` (once). */
  cutAfter(bytes: number, onCut: () => void): void {
    this.#cutAfter = this.bytesSent + bytes;
    this.#onCut = onCut;
  }

  /** Drops everything queued and refuses further writes silently. */
  stop(): void {
    this.#stopped = true;
  }

  /** Queues bytes; resolves when they have been handed to the sink at the paced time. */
  send(data: Uint8Array): Promise<void> {
    const run = this.#chain.then(() => this.#send(data));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #send(data: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < data.length && !this.#stopped) {
      const baud = this.baud;
      const slice = baud === null ? data.length : Math.max(1, Math.floor((baud / 10) * (this.sliceMs / 1000)));
      let end = Math.min(data.length, offset + slice);
      let cut = false;
      if (this.#cutAfter !== null && this.bytesSent + (end - offset) >= this.#cutAfter) {
        end = offset + Math.max(0, this.#cutAfter - this.bytesSent);
        cut = true;
      }
      if (baud !== null) {
        const now = performance.now();
        if (this.#freeAt < now) this.#freeAt = now;
      }
      if (end > offset) await this.#sink.write(data.subarray(offset, end));
      this.bytesSent += end - offset;
      if (baud !== null) {
        this.#freeAt += ((end - offset) * 10 * 1000) / baud;
        const wait = this.#freeAt - performance.now();
        if (wait > 1) await sleep(wait);
      }
      offset = end;
      if (cut) {
        this.#stopped = true;
        const onCut = this.#onCut;
        this.#onCut = null;
        this.#cutAfter = null;
        onCut?.();
      }
    }
  }
}
