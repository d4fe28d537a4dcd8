/**
 * `IrisHidScanner`: a protocol-1 HID iris camera behind the one Scanner interface. It captures eye
 * images (640×480 by default, or a cropped kind), reports eye presence from the STATUS feature
 * report, drives the IR illuminator only while capturing, and uses the indicator LED for feedback.
 * It keeps no templates: the module-side operations refuse with `DRIVER_UNSUPPORTED` (the
 * capabilities say so), `usedSlots()` is empty and `clearModule()` has nothing to clear.
 */
import { AgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import { sleep } from '../../src/core/time.js';
import type { CapturedImage, Feedback, ModuleSearchResult, ModuleTemplate, Scanner, ScannerCapabilities, ScannerInfo } from '../scanner.js';
import { ScannerBase } from '../scanner-base.js';
import type { ReopenOptions } from '../transport/reopen.js';
import type { ReportTransport } from '../transport/transport.js';
import { IrisHidDriver } from './driver.js';
import { IrisImageKind, type IrisDeviceInfo, type IrisLights } from './protocol.js';
import { irisResolution } from './models.js';

const log = logger('drivers:iris-hid');

/** IR illuminator drive while capturing. */
export const IR_CAPTURE_LEVEL = 200;

export interface IrisHidScannerOptions {
  transport: ReportTransport;
  /** Reply timeout and longest gap between result chunks (ms, default 1000). */
  timeoutMs?: number;
  retries?: number;
  /** How long a capture waits for an eye (ms, default 5000). */
  captureTimeoutMs?: number;
  /** Image kind and size to capture (default: kind 2, 640×480). */
  image?: { kind: number; width: number; height: number };
  /** Refuse captures under this quality (0..100, default 0). */
  minQuality?: number;
  /** STATUS polling interval while waiting for an eye (ms, default 50). */
  pollMs?: number;
  reconnect?: boolean | ReopenOptions;
}

const LED: Record<Feedback, Omit<IrisLights, 'ir'>> = {
  idle: { color: 0, blink: 0 },
  busy: { color: 3, blink: 0 },
  accepted: { color: 1, blink: 0 },
  'enroll-step': { color: 1, blink: 1 },
  unknown: { color: 2, blink: 1 },
  'try-again': { color: 3, blink: 1 },
  error: { color: 2, blink: 0 },
};

export class IrisHidScanner extends ScannerBase<ReportTransport> implements Scanner {
  readonly family = 'iris-hid' as const;
  readonly modality = 'iris' as const;
  readonly capabilities: ScannerCapabilities = { image: true, moduleSearch: false, moduleEnroll: false, feedback: true };
  readonly driver: IrisHidDriver;
  readonly #opts: { captureTimeoutMs: number; image: { kind: number; width: number; height: number }; minQuality: number; pollMs: number };
  #device: IrisDeviceInfo | null = null;
  #lights: IrisLights = { ir: 0, color: 0, blink: 0 };

  constructor(options: IrisHidScannerOptions) {
    super(options.transport, { name: 'iris camera', log, reconnect: options.reconnect ?? true });
    this.driver = new IrisHidDriver(options.transport, { timeoutMs: options.timeoutMs ?? 1000, retries: options.retries ?? 2 });
    this.#opts = {
      captureTimeoutMs: options.captureTimeoutMs ?? 5000,
      image: options.image ?? { kind: IrisImageKind.Vga, width: 640, height: 480 },
      minQuality: options.minQuality ?? 0,
      pollMs: options.pollMs ?? 50,
    };
  }

  protected resetLink(): void {
    this.driver.resetConnection();
  }

  protected async handshake(): Promise<ScannerInfo> {
    this.#device = await this.driver.deviceInfo();
    if (this.#device.protocolVersion !== 1) {
      throw new AgentError(
        'DRIVER_UNSUPPORTED',
        `the iris camera speaks protocol version ${this.#device.protocolVersion}, this driver version 1`,
        { family: 'iris-hid', version: this.#device.protocolVersion },
        { hint: 'Update the agent or use a camera with protocol version 1 firmware.' },
      );
    }
    this.#lights = { ir: 0, color: 0, blink: 0 };
    await this.driver.setLights(this.#lights);
    log.info({ model: this.#device.model, firmware: this.#device.firmware, path: this.transport.path }, 'iris camera open');
    return this.#infoNow();
  }

  #infoNow(): ScannerInfo {
    const d = this.#device!;
    return {
      family: 'iris-hid',
      modality: 'iris',
      model: d.model,
      firmware: d.firmware,
      serial: d.serial,
      transport: this.transport.kind,
      path: this.transport.path,
      baud: null,
      capacity: null,
      templates: null,
      image: { width: this.#opts.image.width, height: this.#opts.image.height, bitsPerPixel: 8 },
      resolution: irisResolution(d.model, d.ppi),
    };
  }

  /** Illuminator and indicator off before the device closes. */
  protected override async goodbye(): Promise<void> {
    await this.driver.setLights({ ir: 0, color: 0, blink: 0 });
  }

  async info(): Promise<ScannerInfo> {
    if (!this.#device)
      throw new AgentError('DRIVER_NOT_OPEN', 'the iris camera is not open', { family: 'iris-hid' }, { hint: 'Call open() first.' });
    return this.#infoNow();
  }

  async waitForPresence(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      if (options.signal?.aborted) return false;
      if ((await this.driver.status()).eyeInView) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      try {
        await sleep(Math.min(this.#opts.pollMs, left), options.signal);
      } catch {
        return false;
      }
    }
  }

  /** One eye image, with the IR illuminator on only for the capture. */
  async captureImage(): Promise<CapturedImage> {
    await this.#setLights({ ir: IR_CAPTURE_LEVEL });
    try {
      const r = await this.driver.capture({
        ...this.#opts.image,
        timeoutMs: this.#opts.captureTimeoutMs,
        minQuality: this.#opts.minQuality,
      });
      const res = this.#device ? irisResolution(this.#device.model, this.#device.ppi) : null;
      const ppi = res?.kind === 'iris' ? (res.ppi ?? 0) : 0;
      return {
        width: r.width,
        height: r.height,
        pixels: r.pixels,
        sourceBitsPerPixel: 8,
        dpi: ppi,
        irisDiameterPx: r.irisRadius > 0 ? 2 * r.irisRadius : null,
        quality: r.quality,
      };
    } finally {
      if (this.transport.isOpen) await this.#setLights({ ir: 0 }).catch(() => undefined);
    }
  }

  async searchOnModule(): Promise<ModuleSearchResult | null> {
    throw unsupported('searching on the camera');
  }

  async enrollOnModule(): Promise<ModuleTemplate> {
    throw unsupported('enrolling on the camera');
  }

  async storeOnModule(): Promise<void> {
    throw unsupported('storing templates on the camera');
  }

  async readFromModule(): Promise<ModuleTemplate> {
    throw unsupported('reading templates from the camera');
  }

  async deleteOnModule(): Promise<void> {
    throw unsupported('deleting templates on the camera');
  }

  /** The camera keeps no templates: nothing to clear. */
  async clearModule(): Promise<void> {}

  /** The camera keeps no templates. */
  async usedSlots(): Promise<number[]> {
    return [];
  }

  async feedback(kind: Feedback): Promise<void> {
    await this.#setLights(LED[kind]);
  }

  async #setLights(change: Partial<IrisLights>): Promise<void> {
    this.#lights = { ...this.#lights, ...change };
    await this.driver.setLights(this.#lights);
  }
}

function unsupported(what: string): AgentError {
  return new AgentError(
    'DRIVER_UNSUPPORTED',
    `${what} is not something an iris camera does`,
    { family: 'iris-hid', what },
    { hint: 'Check scanner.capabilities before calling module operations; iris templates live on the host.' },
  );
}
