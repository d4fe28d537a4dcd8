/**
 * Tested in test/unit/drivers/transport/memory-transport.test.ts (a transport's disconnect emitted
 * once, through transport.contract.ts) and test/unit/terminal/scanner-worker.test.ts (a scanner's
 * events).
 */
import { EventEmitter } from 'node:events';

/**
 * A small typed event emitter: `class Foo extends TypedEmitter<{data: Buffer; close: undefined}>`.
 * Listeners receive exactly one argument, the event's payload.
 */
export class TypedEmitter<Events extends Record<string, unknown>> {
  readonly #emitter = new EventEmitter();

  constructor() {
    this.#emitter.setMaxListeners(100);
  }

  on<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): this {
    this.#emitter.on(event, listener);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): this {
    this.#emitter.once(event, listener);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): this {
    this.#emitter.off(event, listener);
    return this;
  }

  protected emit<K extends keyof Events & string>(event: K, payload: Events[K]): boolean {
    return this.#emitter.emit(event, payload);
  }

  listenerCount<K extends keyof Events & string>(event: K): number {
    return this.#emitter.listenerCount(event);
  }

  removeAllListeners(): this {
    this.#emitter.removeAllListeners();
    return this;
  }
}
