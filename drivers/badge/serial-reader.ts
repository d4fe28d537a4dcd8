/**
 * `BadgeSerialReader`: a card reader on a serial line (a 125 kHz EM4100 module, a USB-serial
 * reader, a Wiegand-to-UART converter) that sends one frame per card read, in one of the formats
 * of formats.ts, and hears nothing. The bytes go through the reader's `@serialport/parser-readline`
 * (reader.ts); after an unplug the port is reopened with backoff like every serial scanner.
 */
import { logger } from '../../src/core/logger.js';
import type { ByteTransport } from '../transport/transport.js';
import { badgeCodec } from './formats.js';
import { BadgeReader, type BadgeReaderOptions } from './reader.js';

const log = logger('drivers:badge-serial');

/** Most serial card readers (RDM6300, Wiegand converters, USB-serial readers) ship at 9600 8N1. */
export const BADGE_SERIAL_DEFAULT_BAUD = 9600;

export interface BadgeSerialReaderOptions extends BadgeReaderOptions {
  /** The line format the reader sends (default em4100-dec). */
  format?: string;
  baud?: number;
}

export class BadgeSerialReader extends BadgeReader {
  readonly family = 'badge-serial' as const;
  readonly #baud: number;

  constructor(transport: ByteTransport, options: BadgeSerialReaderOptions = {}) {
    super(transport, badgeCodec(options.format), { ...options, name: 'badge reader', log });
    this.#baud = options.baud ?? BADGE_SERIAL_DEFAULT_BAUD;
    transport.on('data', (chunk) => this.feed(chunk));
  }

  protected override baud(): number | null {
    return this.transport.kind === 'serial' ? this.#baud : null;
  }
}
