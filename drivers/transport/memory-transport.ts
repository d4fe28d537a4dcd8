/**
 * An in-memory transport pair for unit tests and in-process simulators: bytes written on one end
 * arrive as `data` on the other, asynchronously and in order. `close()` on one end is seen by the
 * other as a `disconnect` (the device went away), exactly like pulling a cable.
 */
import { TypedEmitter } from '../../src/core/events.js';
import type { ByteTransport, TransportEvents } from './transport.js';
import { closedError, disconnectedError } from './errors.js';

export class MemoryTransport extends TypedEmitter<TransportEvents> implements ByteTransport {
  readonly kind = 'memory' as const;
  #open = false;
  #gone = false;
  #peer: MemoryTransport | undefined;
  /** Bytes written here before the peer opened; delivered when it opens. */
  #pending: Buffer[] = [];

  constructor(readonly path: string) {
    super();
  }

  /** @internal */
  static link(a: MemoryTransport, b: MemoryTransport): void {
    a.#peer = b;
    b.#peer = a;
  }

  get isOpen(): boolean {
    return this.#open;
  }

  async open(): Promise<void> {
    if (this.#gone) throw disconnectedError(this.path, 'the other end closed');
    this.#open = true;
    const pending = this.#pending;
    this.#pending = [];
    for (const chunk of pending) this.#deliver(chunk);
  }

  async write(data: Uint8Array): Promise<void> {
    if (this.#gone) throw disconnectedError(this.path, 'the other end closed');
    if (!this.#open) throw closedError(this.path);
    const peer = this.#peer!;
    const copy = Buffer.from(data);
    if (peer.#open) peer.#deliver(copy);
    else peer.#pending.push(copy);
  }

  async close(): Promise<void> {
    this.#open = false;
    this.#pending = [];
    if (this.#gone) return;
    this.#gone = true;
    this.#peer!.#goneAway();
  }

  #goneAway(): void {
    if (this.#gone) return;
    this.#gone = true;
    if (!this.#open) return;
    this.#open = false;
    setImmediate(() => this.emit('disconnect', disconnectedError(this.path, 'the other end closed')));
  }

  #deliver(chunk: Buffer): void {
    setImmediate(() => {
      if (this.#open) this.emit('data', chunk);
    });
  }
}

/** Two connected ends: `host` for the driver, `device` for the simulator. */
export function createMemoryPair(name = 'memory'): { host: MemoryTransport; device: MemoryTransport } {
  const host = new MemoryTransport(`${name}:host`);
  const device = new MemoryTransport(`${name}:device`);
  MemoryTransport.link(host, device);
  return { host, device };
}
