/**
 * `Gt521Scanner`: the GT-521F32/F52 behind the one Scanner interface. Presence is IsPressFinger
 * polled with the sensor LED on; an image is CaptureFinger + GetImage (258 × 202); the module
 * searches its own slots (CaptureFinger + Identify) and enrols from three presses
 * (EnrollStart(-1), Enroll1..3) returning its 498-byte template; LED blinks are the feedback.
 *
 * After a disconnect the scanner emits `disconnect`, reopens the transport with backoff
 * (transport/reopen.ts), redoes the Open handshake and emits `reconnect`.
 */
import { AgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import { sleep } from '../../src/core/time.js';
import type {
  CapturedImage,
  Feedback,
  ModuleEnrollOptions,
  ModuleSearchResult,
  ModuleTemplate,
  Scanner,
  ScannerCapabilities,
  ScannerInfo,
} from '../scanner.js';
import { enrollByPresses } from '../module-enrollment.js';
import { ScannerBase } from '../scanner-base.js';
import type { ReopenOptions } from '../transport/reopen.js';
import type { ByteTransport } from '../transport/transport.js';
import { Gt521Driver, formatFirmware, formatSerial } from './driver.js';
import { Gt521NackError } from './errors.js';
import { DEFAULT_BAUD, IMAGE_HEIGHT, IMAGE_WIDTH, NackCode } from './protocol.js';
import { dpiOf, resolutionOf } from '../resolution.js';
import { GT521_RESOLUTION } from './models.js';

const log = logger('drivers:gt521');

/** The family's nominal resolution (models.ts: both models' datasheets give 450 dpi). */
export const GT521_DPI = dpiOf(GT521_RESOLUTION.nominal);
export const GT521_TEMPLATE_FORMAT = 'gt521';

export interface Gt521ScannerOptions {
  transport: ByteTransport;
  /** The transport's line speed (default 9600). */
  baud?: number;
  /** Base timeout of one exchange (ms, default 1000). */
  timeoutMs?: number;
  retries?: number;
  /** IsPressFinger polling interval (ms, default 100). */
  pollMs?: number;
  /** How long each enrolment press may take (ms, default 15000). */
  pressTimeoutMs?: number;
  /** Blink length for feedback (ms, default 120). */
  blinkMs?: number;
  /** Reopen after a disconnect (default true); options for the backoff. */
  reconnect?: boolean | ReopenOptions;
}

export class Gt521Scanner extends ScannerBase implements Scanner {
  readonly family = 'gt521' as const;
  readonly modality = 'finger' as const;
  readonly capabilities: ScannerCapabilities = {
    image: true,
    moduleSearch: true,
    moduleEnroll: true,
    moduleEnrollPresses: 3,
    feedback: true,
  };
  readonly driver: Gt521Driver;
  readonly #opts: Required<Omit<Gt521ScannerOptions, 'transport' | 'reconnect'>>;
  #info: ScannerInfo | null = null;

  constructor(options: Gt521ScannerOptions) {
    super(options.transport, { name: 'GT-521', log, reconnect: options.reconnect ?? true });
    this.#opts = {
      baud: options.baud ?? DEFAULT_BAUD,
      timeoutMs: options.timeoutMs ?? 1000,
      retries: options.retries ?? 2,
      pollMs: options.pollMs ?? 100,
      pressTimeoutMs: options.pressTimeoutMs ?? 15_000,
      blinkMs: options.blinkMs ?? 120,
    };
    this.driver = new Gt521Driver(this.transport, { baud: this.#opts.baud, timeoutMs: this.#opts.timeoutMs, retries: this.#opts.retries });
  }

  protected resetLink(): void {
    this.driver.link.resetConnection();
  }

  protected async handshake(): Promise<ScannerInfo> {
    const dev = await this.driver.open();
    const { model, capacity } = await this.driver.detectCapacity();
    const templates = await this.driver.getEnrollCount();
    this.#info = {
      family: 'gt521',
      modality: 'finger',
      model,
      firmware: formatFirmware(dev.firmwareVersion),
      serial: formatSerial(dev.serialNumber),
      transport: this.transport.kind,
      path: this.transport.path,
      baud: this.driver.link.baud,
      capacity,
      templates,
      image: { width: IMAGE_WIDTH, height: IMAGE_HEIGHT, bitsPerPixel: 8 },
      resolution: resolutionOf(GT521_RESOLUTION, model),
    };
    log.info({ model, firmware: this.#info.firmware, capacity, templates, path: this.transport.path }, 'GT-521 open');
    return { ...this.#info };
  }

  /** Sensor light off and Close, before the port closes. */
  protected override async goodbye(): Promise<void> {
    await this.driver.cmosLed(false);
    await this.driver.close();
  }

  async info(): Promise<ScannerInfo> {
    if (!this.#info) throw notOpen();
    this.#info.templates = await this.driver.getEnrollCount();
    this.#info.baud = this.driver.link.baud;
    return { ...this.#info };
  }

  async waitForPresence(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    return this.#waitFinger(true, options.timeoutMs, options.signal);
  }

  async #waitFinger(pressed: boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    await this.driver.cmosLed(true);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (signal?.aborted) return false;
      if ((await this.driver.isPressFinger()) === pressed) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      try {
        await sleep(Math.min(this.#opts.pollMs, left), signal);
      } catch {
        return false;
      }
    }
  }

  async captureImage(): Promise<CapturedImage> {
    await this.driver.cmosLed(true);
    await this.driver.captureFinger(true);
    const pixels = await this.driver.getImage();
    const dpi = dpiOf(resolutionOf(GT521_RESOLUTION, this.#info?.model));
    return { width: IMAGE_WIDTH, height: IMAGE_HEIGHT, pixels: new Uint8Array(pixels), sourceBitsPerPixel: 8, dpi, quality: null };
  }

  /** The module gives no score; a match is reported with score 100. */
  async searchOnModule(): Promise<ModuleSearchResult | null> {
    await this.driver.cmosLed(true);
    await this.driver.captureFinger(false);
    const slot = await this.driver.identify();
    return slot === null ? null : { slot, score: 100 };
  }

  /**
   * Always three presses (the module's enrolment); `presses` other than 3 is refused. A press the
   * module does not take (a poor image, no finger when captured) is asked again, keeping the
   * earlier ones; presses of different fingers make the module forget the enrolment
   * (NACK_ENROLL_FAILED), which then starts again from the first press.
   */
  async enrollOnModule(options: ModuleEnrollOptions = {}): Promise<ModuleTemplate> {
    const presses = options.presses ?? 3;
    if (presses !== 3) {
      throw new AgentError(
        'DRIVER_BAD_PARAM',
        `a GT-521 enrols from exactly 3 presses, not ${presses}`,
        { family: 'gt521', presses },
        { hint: 'Ask for 3 presses.' },
      );
    }
    await this.driver.enrollStart(null);
    let template: Buffer | null = null;
    await enrollByPresses({
      presses,
      options,
      pressTimeoutMs: this.#opts.pressTimeoutMs,
      placed: (timeoutMs, signal) => this.#waitFinger(true, timeoutMs, signal),
      lifted: (timeoutMs, signal) => this.#waitFinger(false, timeoutMs, signal),
      read: async (step) => {
        await this.driver.captureFinger(true);
        if (step === 1) await this.driver.enroll1();
        else if (step === 2) await this.driver.enroll2();
        else template = await this.driver.enroll3(true);
      },
      restartAt: async (err, step) => {
        if (!(err instanceof Gt521NackError && err.nack === NackCode.EnrollFailed)) return step;
        await this.driver.enrollStart(null);
        return 1;
      },
      noFinger: (step) => noFinger(step, this.#opts.pressTimeoutMs),
    });
    return { format: GT521_TEMPLATE_FORMAT, data: new Uint8Array(template!) };
  }

  async storeOnModule(slot: number, template: ModuleTemplate): Promise<void> {
    if (template.format !== GT521_TEMPLATE_FORMAT) {
      throw new AgentError(
        'DRIVER_BAD_TEMPLATE',
        `a GT-521 cannot store a "${template.format}" template`,
        { family: 'gt521', format: template.format },
        { hint: 'Only templates made by a GT-521 module can be stored on one.' },
      );
    }
    await this.driver.setTemplate(slot, template.data, { checkDuplicate: false });
  }

  async readFromModule(slot: number): Promise<ModuleTemplate> {
    return { format: GT521_TEMPLATE_FORMAT, data: new Uint8Array(await this.driver.getTemplate(slot)) };
  }

  /** Deleting an empty slot is not an error. */
  async deleteOnModule(slot: number): Promise<void> {
    try {
      await this.driver.deleteId(slot);
    } catch (err) {
      if (!(err instanceof Gt521NackError && err.nack === NackCode.IsNotUsed)) throw err;
    }
  }

  /** Clearing an empty module is not an error. */
  async clearModule(): Promise<void> {
    try {
      await this.driver.deleteAll();
    } catch (err) {
      if (!(err instanceof Gt521NackError && err.nack === NackCode.DbIsEmpty)) throw err;
    }
  }

  /**
   * The module has no index table: CheckEnrolled slot by slot, stopping once EnrollCount slots
   * were found.
   */
  async usedSlots(): Promise<number[]> {
    const count = await this.driver.getEnrollCount();
    const capacity = this.#info?.capacity ?? (await this.driver.detectCapacity()).capacity;
    const used: number[] = [];
    for (let slot = 0; slot < capacity && used.length < count; slot++) {
      if (await this.driver.checkEnrolled(slot)) used.push(slot);
    }
    return used;
  }

  /** The sensor backlight is the only light: on = busy, off = idle, blinks for outcomes. */
  async feedback(kind: Feedback): Promise<void> {
    const blinks: Record<Feedback, number> = { accepted: 1, 'enroll-step': 1, unknown: 2, 'try-again': 2, error: 3, idle: 0, busy: 0 };
    for (let i = 0; i < blinks[kind]; i++) {
      await this.driver.cmosLed(false);
      await sleep(this.#opts.blinkMs);
      await this.driver.cmosLed(true);
      await sleep(this.#opts.blinkMs);
    }
    await this.driver.cmosLed(kind === 'busy');
  }
}

function notOpen(): AgentError {
  return new AgentError('DRIVER_NOT_OPEN', 'the GT-521 scanner is not open', { family: 'gt521' }, { hint: 'Call open() first.' });
}

function noFinger(step: number, ms: number): AgentError {
  return new AgentError(
    'DRIVER_NO_FINGER',
    `enrolment press ${step}: no finger on the sensor within ${ms} ms`,
    { family: 'gt521', step, ms },
    { hint: 'Place the finger flat on the sensor when the light is on.', retryable: true },
  );
}
