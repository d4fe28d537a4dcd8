/**
 * What both badge readers (serial and keyboard wedge) do the same way behind the one Scanner
 * interface: text from the device is split into frames by `@serialport/parser-readline` (each
 * format's delimiter: LF, or ETX for the STX/ETX hex frames), each frame judged by the format's
 * codec (formats.ts), and the reads queued for the scanner worker:
 *
 * - a card → a read (`readCredential` gives `{credential, format}`), unless the same card was seen
 *   less than `holdOffMs` ago: a card held in the field (RDM6300 modules repeat its frame every
 *   ~50 ms) is one read, however long it stays;
 * - a frame that is a card read gone wrong (checksum, parity, length) → a failed read:
 *   `readCredential` rejects with `DRIVER_CHECKSUM` / `DRIVER_PROTOCOL`, so the person is asked to
 *   present the card again;
 * - noise (not shaped like the format; a line longer than MAX_FRAME_BYTES without its delimiter)
 *   → dropped and counted (`stats.noise`).
 *
 * `waitForPresence` is true while a read waits. At most MAX_QUEUED reads wait (the oldest go).
 * A reader keeps no templates and shows nothing: module operations refuse with
 * `DRIVER_UNSUPPORTED`, `feedback` does nothing (`capabilities.feedback` false: the agent shows it
 * on the terminal's other scanners). The credential is never logged.
 *
 * Tested in test/unit/drivers/badge/serial-reader.test.ts and
 * test/unit/drivers/badge/hid-reader.test.ts (both readers, through this shared part) and
 * test/unit/fuzz.test.ts (what it does with any line).
 */
import { ReadlineParser } from '@serialport/parser-readline';
import { AgentError } from '../../src/core/errors.js';
import type { logger } from '../../src/core/logger.js';
import type {
  BadgeRead,
  CapturedImage,
  Feedback,
  ModuleSearchResult,
  ModuleTemplate,
  Scanner,
  ScannerCapabilities,
  ScannerFamily,
  ScannerInfo,
} from '../scanner.js';
import { ScannerBase, type ScannerBaseOptions } from '../scanner-base.js';
import type { ByteTransport } from '../transport/transport.js';
import { MAX_FRAME_BYTES, credentialOf, type BadgeFormatCodec } from './formats.js';

type Logger = ReturnType<typeof logger>;

/** Reads waiting at most (a burst of cards while the agent is busy). */
export const MAX_QUEUED = 8;
/** The same card within this long is the same presentation (ms). */
export const DEFAULT_HOLD_OFF_MS = 1500;

export interface BadgeReaderOptions extends ScannerBaseOptions {
  /** The same card again within this long (ms) is not a new read (default 1500). */
  holdOffMs?: number;
  /** The model named in info (a reader does not say what it is). */
  model?: string;
}

export interface BadgeReaderStats {
  reads: number;
  /** Frames of a card already read, inside the hold-off. */
  repeats: number;
  /** Card reads gone wrong (checksum, parity, length): the person was asked again. */
  misreads: number;
  /** Frames that were not a card at all. */
  noise: number;
}

type Queued = { read: BadgeRead } | { error: AgentError };

export abstract class BadgeReader<T extends ByteTransport = ByteTransport> extends ScannerBase<T> implements Scanner {
  abstract readonly family: ScannerFamily;
  readonly modality = 'badge' as const;
  readonly capabilities: ScannerCapabilities = {
    image: false,
    moduleSearch: false,
    moduleEnroll: false,
    feedback: false,
    credential: true,
  };
  readonly stats: BadgeReaderStats = { reads: 0, repeats: 0, misreads: 0, noise: 0 };
  protected readonly codec: BadgeFormatCodec;
  readonly #holdOffMs: number;
  readonly #model: string;
  readonly #readerLog: Logger;
  #parser: ReadlineParser;
  #queue: Queued[] = [];
  #lastSeen = new Map<string, number>();
  #waiters = new Set<() => void>();
  #open = false;

  constructor(transport: T, codec: BadgeFormatCodec, options: BadgeReaderOptions & { name: string; log: Logger }) {
    super(transport, options);
    this.codec = codec;
    this.#holdOffMs = options.holdOffMs ?? DEFAULT_HOLD_OFF_MS;
    this.#model = options.model ?? `${codec.name} reader`;
    this.#readerLog = options.log;
    this.#parser = this.#newParser();
  }

  #newParser(): ReadlineParser {
    // latin1: one character per byte, so STX/ETX and noise bytes pass through as they came.
    const parser = new ReadlineParser({ delimiter: this.codec.delimiter, encoding: 'latin1' });
    parser.on('data', (frame: string) => this.#frame(frame));
    return parser;
  }

  /** Text from the device: split into frames, each judged; a line that never ends is dropped as noise. */
  protected feed(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#parser.write(bytes);
    // What waits for its delimiter is bounded: a line longer than any frame is noise.
    const pending = (this.#parser as unknown as { buffer: Buffer }).buffer;
    if (pending && pending.length > MAX_FRAME_BYTES) {
      (this.#parser as unknown as { buffer: Buffer }).buffer = Buffer.alloc(0);
      this.stats.noise++;
      this.#readerLog.debug({ bytes: pending.length }, 'badge reader: a line longer than any card frame dropped');
    }
  }

  #frame(frame: string): void {
    if (frame.replace(/[\r\n]/g, '').length === 0) return; // an empty line
    const verdict = this.codec.decode(frame);
    if (verdict.ok) {
      const credential = credentialOf(verdict.card);
      const now = performance.now();
      const last = this.#lastSeen.get(credential);
      this.#lastSeen.set(credential, now);
      if (this.#lastSeen.size > 64) this.#forgetOld(now);
      if (last !== undefined && now - last < this.#holdOffMs) {
        this.stats.repeats++;
        return;
      }
      this.stats.reads++;
      this.#push({ read: { credential, format: this.codec.name } });
      return;
    }
    if (verdict.kind === 'noise') {
      this.stats.noise++;
      this.#readerLog.debug({ format: this.codec.name, detail: verdict.detail }, 'badge reader: noise dropped');
      return;
    }
    this.stats.misreads++;
    this.#readerLog.info({ format: this.codec.name, detail: verdict.detail }, 'badge reader: a card read failed its check');
    this.#push({
      error:
        verdict.kind === 'checksum'
          ? new AgentError(
              'DRIVER_CHECKSUM',
              `the badge read failed its check: ${verdict.detail}`,
              { format: this.codec.name },
              { hint: 'hold the card still over the reader and present it again', retryable: true },
            )
          : new AgentError(
              'DRIVER_PROTOCOL',
              `the badge reader sent a frame that is not ${this.codec.name}: ${verdict.detail}`,
              { format: this.codec.name },
              {
                hint: `present the card again; if it repeats, check the reader's output format against scanners[].format (${this.codec.name})`,
              },
            ),
    });
  }

  #forgetOld(now: number): void {
    for (const [k, t] of this.#lastSeen) if (now - t >= this.#holdOffMs) this.#lastSeen.delete(k);
  }

  #push(q: Queued): void {
    this.#queue.push(q);
    if (this.#queue.length > MAX_QUEUED) {
      this.#queue.shift();
      this.#readerLog.warn({ kept: MAX_QUEUED }, 'badge reads arrive faster than the agent takes them: the oldest was dropped');
    }
    for (const wake of [...this.#waiters]) wake();
  }

  protected resetLink(): void {
    // A fresh line: half a frame from before the unplug must not glue onto the next one.
    this.#parser.removeAllListeners('data');
    this.#parser.destroy();
    this.#parser = this.#newParser();
  }

  protected async handshake(): Promise<ScannerInfo> {
    this.#open = true;
    return this.#infoNow();
  }

  override async close(): Promise<void> {
    this.#open = false;
    for (const wake of [...this.#waiters]) wake();
    await super.close();
  }

  #infoNow(): ScannerInfo {
    return {
      family: this.family,
      modality: 'badge',
      model: this.#model,
      firmware: null,
      serial: null,
      transport: this.transport.kind,
      path: this.transport.path,
      baud: this.baud(),
      capacity: null,
      templates: null,
      image: null,
      resolution: { kind: 'none' },
    };
  }

  /** The line speed (serial readers), null otherwise. */
  protected baud(): number | null {
    return null;
  }

  async info(): Promise<ScannerInfo> {
    if (!this.#open)
      throw new AgentError('DRIVER_NOT_OPEN', 'the badge reader is not open', { family: this.family }, { hint: 'Call open() first.' });
    return this.#infoNow();
  }

  /** True as soon as a read (or a failed read) waits; false on timeout or abort. */
  async waitForPresence(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    if (this.#queue.length > 0) return true;
    if (options.signal?.aborted || !this.#open) return false;
    return new Promise<boolean>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        options.signal?.removeEventListener('abort', done);
        resolve(this.#queue.length > 0);
      };
      const timer = setTimeout(done, options.timeoutMs);
      this.#waiters.add(done);
      options.signal?.addEventListener('abort', done, { once: true });
    });
  }

  async readCredential(): Promise<BadgeRead> {
    const q = this.#queue.shift();
    if (!q) throw new AgentError('DRIVER_NO_CARD', 'no badge was read', { family: this.family }, { hint: 'hold the card over the reader' });
    if ('error' in q) throw q.error;
    return q.read;
  }

  async captureImage(): Promise<CapturedImage> {
    throw this.#unsupported('capturing an image');
  }

  async searchOnModule(): Promise<ModuleSearchResult | null> {
    throw this.#unsupported('searching templates');
  }

  async enrollOnModule(): Promise<ModuleTemplate> {
    throw this.#unsupported('enrolling templates');
  }

  async storeOnModule(): Promise<void> {
    throw this.#unsupported('storing templates');
  }

  async readFromModule(): Promise<ModuleTemplate> {
    throw this.#unsupported('reading templates');
  }

  async deleteOnModule(): Promise<void> {
    throw this.#unsupported('deleting templates');
  }

  /** A reader keeps no templates: nothing to clear. */
  async clearModule(): Promise<void> {}

  async usedSlots(): Promise<number[]> {
    return [];
  }

  /** A plain reader has no light or buzzer the host can drive. */
  async feedback(_kind: Feedback): Promise<void> {}

  #unsupported(what: string): AgentError {
    return new AgentError(
      'DRIVER_UNSUPPORTED',
      `${what} is not something a badge reader does`,
      { family: this.family, what },
      { hint: 'badge readers read cards (readCredential); check scanner.capabilities' },
    );
  }
}
