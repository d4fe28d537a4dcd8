/**
 * `Scanner` for R30x modules: the agent's one interface on top of `R30xDriver`.
 *
 * - Capacity comes from ReadSysPara, so searches cover the whole library (not the first 163 slots).
 * - Device statuses the agent acts on are mapped to family-neutral codes: no finger →
 *   `DRIVER_NO_FINGER`, a poor image → `DRIVER_LOW_QUALITY` (the device's number and name stay in
 *   the context); the rest keep their `DRIVER_R30X_<NAME>` code.
 * - A transport disconnect emits `disconnect` and reopens with backoff; `reconnect` follows with
 *   fresh info once the module answers again (scanner-base.ts).
 */
import { AgentError, isAgentError } from '../../src/core/errors.js';
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
import type { ByteTransport } from '../transport/transport.js';
import { R30xDriver, type ProductInfo, type R30xDriverOptions, type SystemParameters } from './driver.js';
import { IMAGE_HEIGHT, IMAGE_WIDTH, LedColor, LedControl } from './protocol.js';
import { dpiOf, resolutionOf } from '../resolution.js';
import { R30X_RESOLUTION } from './models.js';

const log = logger('drivers:r30x');

export const R30X_TEMPLATE_FORMAT = 'r30x-char';

export interface R30xScannerOptions extends R30xDriverOptions {
  /** Poll interval of waitForPresence (ms). */
  pollMs?: number;
  /** Reopen after a disconnect (default true). */
  reconnect?: boolean;
  /** How long enrolment waits for each press (ms). */
  pressTimeoutMs?: number;
}

const LED_FOR: Record<Feedback, [number, number, number, number]> = {
  accepted: [LedControl.flashing, 40, LedColor.green, 2],
  unknown: [LedControl.flashing, 40, LedColor.red, 3],
  'try-again': [LedControl.flashing, 60, LedColor.yellow, 2],
  idle: [LedControl.breathing, 200, LedColor.blue, 0],
  busy: [LedControl.on, 0, LedColor.purple, 0],
  'enroll-step': [LedControl.flashing, 30, LedColor.blue, 1],
  error: [LedControl.on, 0, LedColor.red, 0],
};

export class R30xScanner extends ScannerBase implements Scanner {
  readonly family = 'r30x' as const;
  readonly modality = 'finger' as const;
  readonly driver: R30xDriver;
  #options: R30xScannerOptions;
  #params: SystemParameters | null = null;
  #product: ProductInfo | null = null;
  #led = false;

  constructor(transport: ByteTransport, options: R30xScannerOptions = {}) {
    super(transport, { name: 'R30x module', log, reconnect: options.reconnect ?? true, pauseMs: 500 });
    this.#options = options;
    this.driver = new R30xDriver(transport, options);
  }

  get capabilities(): ScannerCapabilities {
    return { image: true, moduleSearch: true, moduleEnroll: true, moduleEnrollPresses: 2, feedback: this.#led };
  }

  protected resetLink(): void {
    this.driver.resetLink();
  }

  protected async handshake(): Promise<ScannerInfo> {
    await this.#identify();
    return this.info();
  }

  async #identify(): Promise<void> {
    await this.driver.verifyPassword();
    this.#params = await this.driver.readSystemParameters();
    try {
      this.#product = await this.driver.readProductInfo({ timeoutMs: 300, retries: 0 });
    } catch (err) {
      if (isAgentError(err, 'TRANSPORT_DISCONNECTED')) throw err;
      this.#product = null; // older modules lack ReadProdInfo
    }
    this.#led = this.#product !== null;
  }

  async info(): Promise<ScannerInfo> {
    const params = this.#params ?? (await this.driver.readSystemParameters());
    const templates = await this.driver.templateCount();
    return {
      family: 'r30x',
      modality: 'finger',
      model: this.#product?.model || 'R30x',
      firmware: this.#product ? this.#product.hardwareVersion : null,
      serial: this.#product?.serial || null,
      transport: this.transport.kind,
      path: this.transport.path,
      baud: this.transport.kind === 'serial' ? this.driver.baud : null,
      capacity: params.capacity,
      templates,
      image: { width: IMAGE_WIDTH, height: IMAGE_HEIGHT, bitsPerPixel: 4 },
      resolution: resolutionOf(R30X_RESOLUTION, this.#product?.model),
      moduleTemplateFormat: R30X_TEMPLATE_FORMAT,
    };
  }

  get parameters(): SystemParameters | null {
    return this.#params;
  }

  async waitForPresence(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    const deadline = performance.now() + options.timeoutMs;
    const pollMs = this.#options.pollMs ?? 100;
    while (!options.signal?.aborted) {
      if (await this.driver.fingerPresent()) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      try {
        await sleep(Math.min(pollMs, left), options.signal);
      } catch {
        return false;
      }
    }
    return false;
  }

  async captureImage(): Promise<CapturedImage> {
    await this.#neutral(() => this.driver.genImg());
    const img = await this.driver.upImage();
    // The model's sensor resolution (models.ts), known once ReadProdInfo named it.
    const dpi = dpiOf(resolutionOf(R30X_RESOLUTION, this.#product?.model));
    return { width: img.width, height: img.height, pixels: img.pixels, sourceBitsPerPixel: 4, dpi, quality: null };
  }

  async searchOnModule(): Promise<ModuleSearchResult | null> {
    const capacity = (this.#params ?? (await this.driver.readSystemParameters())).capacity;
    await this.#neutral(() => this.driver.genImg());
    await this.#neutral(() => this.driver.img2Tz(1));
    return this.driver.search(1, 0, capacity, { hiSpeed: true });
  }

  /**
   * Two presses into the module's two character buffers, then RegModel. A press the module does
   * not take (a poor image, the finger lifted too soon) is asked again, keeping the first; presses
   * that do not combine ask the second again (module-enrollment.ts).
   */
  async enrollOnModule(options: ModuleEnrollOptions = {}): Promise<ModuleTemplate> {
    const presses = 2;
    if (options.presses !== undefined && options.presses !== presses) log.debug({ asked: options.presses }, 'R30x enrols from two presses');
    const pressTimeoutMs = this.#options.pressTimeoutMs ?? 15_000;
    await enrollByPresses({
      presses,
      options,
      pressTimeoutMs,
      // A finger seen is an image taken (GenImg), ready for Img2Tz.
      placed: (timeoutMs, signal) => this.waitForPresence({ timeoutMs, ...(signal ? { signal } : {}) }),
      lifted: (timeoutMs, signal) => this.#waitForLift(timeoutMs, signal),
      read: async (step) => {
        await this.#neutral(() => this.driver.img2Tz(step as 1 | 2));
        if (step === presses) await this.driver.regModel();
      },
      noFinger: (step) =>
        new AgentError(
          'DRIVER_NO_FINGER',
          `no finger on the sensor within ${pressTimeoutMs} ms for press ${step} of ${presses}`,
          { step },
          { hint: 'place the finger on the sensor when the LED asks for it', retryable: true },
        ),
    });
    return { format: R30X_TEMPLATE_FORMAT, data: await this.driver.upChar(1) };
  }

  async storeOnModule(slot: number, template: ModuleTemplate): Promise<void> {
    this.#checkFormat(template);
    await this.driver.downChar(1, template.data);
    await this.driver.store(1, slot);
  }

  async readFromModule(slot: number): Promise<ModuleTemplate> {
    await this.driver.loadChar(1, slot);
    return { format: R30X_TEMPLATE_FORMAT, data: await this.driver.upChar(1) };
  }

  async deleteOnModule(slot: number): Promise<void> {
    await this.driver.deleteChar(slot, 1);
  }

  async clearModule(): Promise<void> {
    await this.driver.empty();
  }

  async usedSlots(): Promise<number[]> {
    const capacity = (this.#params ?? (await this.driver.readSystemParameters())).capacity;
    const slots: number[] = [];
    for (let page = 0; page * 256 < capacity && page < 4; page++) slots.push(...(await this.driver.readIndexTable(page)));
    return slots.filter((s) => s < capacity);
  }

  async feedback(kind: Feedback): Promise<void> {
    if (!this.#led) return;
    const [control, speed, color, count] = LED_FOR[kind];
    await this.driver.auraLed(control, speed, color, count);
  }

  // ----------------------------------------------------------------

  #checkFormat(t: ModuleTemplate): void {
    if (t.format !== R30X_TEMPLATE_FORMAT) {
      throw new AgentError(
        'DRIVER_TEMPLATE_FORMAT',
        `an R30x module stores "${R30X_TEMPLATE_FORMAT}" templates, not "${t.format}"`,
        { format: t.format },
        { hint: 'enrol the person on this kind of module, or use host matching' },
      );
    }
  }

  /** True once the sensor is free; false when the finger stayed for `timeoutMs` (or on abort). */
  async #waitForLift(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (await this.driver.fingerPresent()) {
      if (performance.now() > deadline || signal?.aborted) return false;
      await sleep(this.#options.pollMs ?? 100);
    }
    return true;
  }

  /** Maps the device statuses the agent acts on to family-neutral codes. */
  async #neutral<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AgentError) {
        const name = err.context.deviceName;
        if (name === 'NO_FINGER')
          throw new AgentError('DRIVER_NO_FINGER', err.message, err.context, { hint: err.hint, retryable: true, cause: err });
        if (name === 'IMAGE_DISORDERLY' || name === 'TOO_FEW_FEATURES' || name === 'IMAGE_FAILED') {
          throw new AgentError('DRIVER_LOW_QUALITY', err.message, err.context, { hint: err.hint, retryable: true, cause: err });
        }
      }
      throw err;
    }
  }
}
