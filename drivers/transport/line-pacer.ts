/**
 * Paces a simulator's output at the speed a UART line allows: 10 bits a byte (start, 8 data,
 * stop) at `baud`. Bytes are not sent one timer per byte: each tick writes every byte whose last
 * bit would have left the wire by now, measured against a clock started when the line became
 * busy, so timer jitter never accumulates and the average rate is exact.
 *
 * It also keeps the receive clock: `arrival(n)` says when `n` bytes the host just wrote would have
 * finished arriving, so a simulator answers no earlier than a real module could.
 *
 * Tested in test/unit/drivers/r30x/r30x-serial.test.ts (a whole image paced at 115200 baud takes
 * its wire time) and test/unit/drivers/gt521/gt521-serial.test.ts (a template at the pace of 115200
 * baud), through the serial simulators.
 */
import type { ByteTransport } from './transport.js';

export interface LinePacerOptions {
  baud: number;
  /** False: write at once (in-process tests). */
  enabled?: boolean;
  /** Longest wait between two writes while busy (ms). */
  tickMs?: number;
}

export class LinePacer {
  #transport: ByteTransport;
  baud: number;
  enabled: boolean;
  #tickMs: number;
  #queue: Buffer[] = [];
  #queued = 0;
  /** performance.now() at which the current run's first byte started; bytes sent in this run. */
  #origin = 0;
  #sentInRun = 0;
  #lineFreeAt = 0;
  #rxFreeAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #stalled = false;
  #idleWaiters: Array<() => void> = [];
  /** Called when a write fails (the transport went away). */
  onError: (err: unknown) => void = () => undefined;

  constructor(transport: ByteTransport, options: LinePacerOptions) {
    this.#transport = transport;
    this.baud = options.baud;
    this.enabled = options.enabled ?? true;
    this.#tickMs = options.tickMs ?? 4;
  }

  /** Milliseconds `bytes` take on the wire. */
  wireMs(bytes: number): number {
    return (bytes * 10_000) / this.baud;
  }

  /** When `bytes` written by the host now would have finished arriving (performance.now() ms). */
  arrival(bytes: number): number {
    const now = performance.now();
    this.#rxFreeAt = Math.max(now, this.#rxFreeAt) + (this.enabled ? this.wireMs(bytes) : 0);
    return this.#rxFreeAt;
  }

  send(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (!this.enabled) {
      this.#write(Buffer.from(bytes));
      return;
    }
    if (this.#queued === 0) this.#startRun();
    this.#queue.push(Buffer.from(bytes));
    this.#queued += bytes.length;
    this.#schedule(0);
  }

  /** Stops (true) or resumes (false) the line; bytes queued wait. */
  set stalled(on: boolean) {
    if (on === this.#stalled) return;
    this.#stalled = on;
    if (on) this.#cancelTimer();
    else if (this.#queued > 0) {
      this.#startRun();
      this.#schedule(0);
    }
  }

  get stalled(): boolean {
    return this.#stalled;
  }

  /** Resolves when every queued byte has left. */
  idle(): Promise<void> {
    if (this.#queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Drops everything queued. */
  clear(): void {
    this.#queue = [];
    this.#queued = 0;
    this.#cancelTimer();
    this.#notifyIdle();
  }

  #cancelTimer(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      clearImmediate(this.#timer as unknown as NodeJS.Immediate);
    }
    this.#timer = undefined;
  }

  #startRun(): void {
    this.#origin = Math.max(performance.now(), this.#lineFreeAt);
    this.#sentInRun = 0;
  }

  #schedule(delay: number): void {
    if (this.#timer || this.#stalled) return;
    this.#timer =
      delay <= 0 ? (setImmediate(() => this.#fire()) as unknown as NodeJS.Timeout) : setTimeout(() => this.#fire(), Math.ceil(delay));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#pump();
  }

  #pump(): void {
    if (this.#stalled || this.#queued === 0) return;
    const now = performance.now();
    const byteMs = this.wireMs(1);
    const due = Math.floor((now - this.#origin) / byteMs) - this.#sentInRun;
    if (due > 0) {
      const n = Math.min(due, this.#queued);
      this.#write(this.#take(n));
      this.#sentInRun += n;
      this.#lineFreeAt = this.#origin + this.#sentInRun * byteMs;
    }
    if (this.#queued === 0) {
      this.#notifyIdle();
      return;
    }
    // Wake when a tick's worth of bytes is due, or exactly when the last queued byte is.
    const chunk = Math.max(1, Math.floor(this.#tickMs / byteMs));
    const nextDueAt = this.#origin + (this.#sentInRun + Math.min(this.#queued, chunk)) * byteMs;
    this.#schedule(Math.max(0, nextDueAt - performance.now()));
  }

  #take(n: number): Buffer {
    const parts: Buffer[] = [];
    let left = n;
    while (left > 0) {
      const head = this.#queue[0]!;
      if (head.length <= left) {
        parts.push(head);
        this.#queue.shift();
        left -= head.length;
      } else {
        parts.push(head.subarray(0, left));
        this.#queue[0] = head.subarray(left);
        left = 0;
      }
    }
    this.#queued -= n;
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  #write(chunk: Buffer): void {
    if (!this.#transport.isOpen) return;
    this.#transport.write(chunk).catch((err: unknown) => this.onError(err));
  }

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
