/**
 * What every scanner does the same way around its family's exchanges: opening (the transport,
 * then the family's handshake), closing (the family's last words, then the transport), and the
 * life after a disconnect — `disconnect` once, then in the background reopen with backoff, redo
 * the handshake and emit `reconnect` with fresh info (transport/reopen.ts), until it answers or
 * the scanner is closed. A family's scanner extends it and says how to forget a lost link, how
 * to shake hands and what to say before the port closes.
 *
 * An in-memory transport is not reopened: its other end is gone for good (a simulator plugs back
 * in on a new transport, which a real path allows and a memory pair does not).
 *
 * Tested in test/unit/drivers/iris-hid/scanner.test.ts (disconnect on unplug, reopen with backoff,
 * reconnect), test/unit/drivers/gt521/gt521-serial.test.ts and
 * test/unit/drivers/r30x/r30x-serial.test.ts (reconnecting after an unplug), through the scanners
 * that extend it.
 */
import { TypedEmitter } from '../src/core/events.js';
import type { logger } from '../src/core/logger.js';
import type { ScannerEvents, ScannerInfo } from './scanner.js';
import { startReconnectLoop, type ReopenOptions } from './transport/reopen.js';
import type { ByteTransport } from './transport/transport.js';

type Logger = ReturnType<typeof logger>;

export interface ScannerBaseOptions {
  /** Reopen after a disconnect (default true); backoff options when an object. */
  reconnect?: boolean | ReopenOptions;
}

export abstract class ScannerBase<T extends ByteTransport = ByteTransport> extends TypedEmitter<ScannerEvents> {
  protected readonly transport: T;
  readonly #name: string;
  readonly #log: Logger;
  readonly #reconnect: boolean | ReopenOptions;
  readonly #pauseMs: number;
  #closed = true;
  #reconnecting: AbortController | null = null;

  /**
   * @param name how the logs call the device ("GT-521", "iris camera")
   * @param pauseMs pause after a failed reconnect handshake, on top of the reopen backoff
   */
  constructor(transport: T, options: ScannerBaseOptions & { name: string; log: Logger; pauseMs?: number }) {
    super();
    this.transport = transport;
    this.#name = options.name;
    this.#log = options.log;
    this.#reconnect = options.reconnect ?? true;
    this.#pauseMs = options.pauseMs ?? 0;
    transport.on('disconnect', (err) => this.#onDisconnect(err));
  }

  /** Forgets a lost link (the driver's state) before a handshake on a freshly opened transport. */
  protected abstract resetLink(): void;

  /** The opening exchange: asks the device what it is. */
  protected abstract handshake(): Promise<ScannerInfo>;

  /** Last words before the transport closes (lights off, ...); only called while it is open. */
  protected async goodbye(): Promise<void> {}

  async open(): Promise<ScannerInfo> {
    this.#closed = false;
    if (!this.transport.isOpen) await this.transport.open();
    this.resetLink();
    return this.handshake();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#reconnecting?.abort();
    if (this.transport.isOpen) {
      await this.goodbye().catch((err: unknown) => this.#log.debug({ err: String(err) }, `${this.#name} close handshake failed`));
    }
    await this.transport.close();
  }

  #onDisconnect(err: Error): void {
    if (this.#closed) return;
    this.#log.warn({ path: this.transport.path, err: err.message }, `${this.#name} disconnected`);
    this.emit('disconnect', err);
    if (this.#reconnect === false || this.transport.kind === 'memory') return;
    const backoff = typeof this.#reconnect === 'object' ? this.#reconnect : {};
    let info: ScannerInfo | null = null;
    this.#reconnecting = startReconnectLoop(this.transport, {
      ...backoff,
      handshake: async () => {
        this.resetLink();
        info = await this.handshake();
      },
      closed: () => this.#closed,
      onReconnected: () => this.emit('reconnect', info!),
      onFailedTry: (e) => this.#log.warn({ err: String(e) }, `${this.#name} reconnect attempt failed; trying again`),
      pauseMs: this.#pauseMs,
    });
  }
}
