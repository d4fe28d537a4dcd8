/**
 * `BadgeHidReader`: a USB keyboard-wedge card reader read through hidraw (node-hid), not through
 * the console: its boot-keyboard reports become characters (keyboard.ts), the characters lines
 * (`@serialport/parser-readline`, as on a serial line), the lines card reads (formats.ts; the
 * STX/ETX hex format cannot be typed). The kernel still types the same keys on the console's
 * keyboard input: a kiosk with a desktop should give the reader's input device to nothing else.
 */
import { logger } from '../../src/core/logger.js';
import type { ReportTransport } from '../transport/transport.js';
import { badgeCodec } from './formats.js';
import { KeyboardDecoder } from './keyboard.js';
import { BadgeReader, type BadgeReaderOptions } from './reader.js';

const log = logger('drivers:badge-hid');

export interface BadgeHidReaderOptions extends BadgeReaderOptions {
  transport: ReportTransport;
  /** The line format the reader types (default em4100-dec). */
  format?: string;
}

export class BadgeHidReader extends BadgeReader<ReportTransport> {
  readonly family = 'badge-hid' as const;
  readonly #keys = new KeyboardDecoder();

  constructor(options: BadgeHidReaderOptions) {
    super(options.transport, badgeCodec(options.format, { keyboard: true }), { ...options, name: 'keyboard-wedge badge reader', log });
    options.transport.on('data', (report) => this.feed(Buffer.from(this.#keys.decode(report), 'latin1')));
  }

  protected override resetLink(): void {
    this.#keys.reset();
    super.resetLink();
  }
}
