/**
 * An in-process iris camera speaking protocol version 1 (PROTOCOL.md), byte for byte, on the HID
 * seam: `simulator.opener` opens a device handle with node-hid's HIDAsync shape, so the real
 * HidTransport and driver run against it unchanged.
 *
 * Virtual eyes are numbers (the synthetic seed): `present(id)` puts one in view. Images come from
 * the injected source (`(eyeId, impression) => image`, optionally with the iris circle in
 * `truth`), are fitted to 640×480, or cropped around the iris for kinds 3 and 7 (kind 7 masked
 * outside the iris to 128).
 *
 * Input reports are paced like a full-speed interrupt endpoint: one 64-byte report every
 * `reportIntervalMs` (default 1 ms), on absolute deadlines.
 *
 * Fault switches (simulator/faults.ts): bad-checksum (the next result's CRC-32 is wrong),
 * dropped-bytes (one chunk of the next result is lost), stall (the camera stops sending and
 * answering), unplug (at once: the device disappears, the read loop errors, writes fail,
 * opening fails until `replug()`), no-finger / no-eye (nothing in view), low-quality (quality 25
 * and a noisy image).
 *
 * Tested in test/unit/drivers/iris-hid/driver.test.ts, test/unit/drivers/iris-hid/scanner.test.ts
 * and test/unit/drivers/iris-hid/probe.test.ts (the real HidTransport and driver against it).
 */
import { EventEmitter } from 'node:events';
import { logger } from '../../src/core/logger.js';
import { sleep } from '../../src/core/time.js';
import { SimulatorBase } from '../simulator/base.js';
import { degradeImage, fitImage, seededRandom, type SimEyeImage, type SimEyeImageSource } from '../simulator/images.js';
import type { HidDeviceHandle, HidOpener } from '../transport/hid-transport.js';
import { irisCommandName, IrisCommands, IrisFeatures } from './commands.js';
import {
  ALLOWED_KINDS,
  chunkResult,
  decodeCommand,
  encodeReply,
  encodeResult,
  IrisCommand,
  InputType,
  IrisImageKind,
  IrisStatus,
  MASK_VALUE,
  PROTOCOL_VERSION,
  REPORT_SIZE,
  ReportId,
  RESULT_HEADER_SIZE,
  type CaptureRequest,
  type IrisCommandReport,
  type IrisLights,
} from './protocol.js';

export { RECEIVED_KEPT } from '../simulator/base.js';

const log = logger('drivers:iris-sim');

export interface IrisHidSimulatorOptions {
  images: SimEyeImageSource;
  model?: string;
  firmware?: string;
  serial?: string;
  /** Pace input reports (default true). */
  pace?: boolean;
  /** Milliseconds between two input reports (default 1: full-speed interrupt endpoint). */
  reportIntervalMs?: number;
}

interface Stored {
  tag: number;
  message: Buffer;
}

function usbTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One open handle on the simulated device (what node-hid's HIDAsync.open would return). */
class SimHidHandle extends EventEmitter implements HidDeviceHandle {
  constructor(private readonly sim: IrisHidSimulator) {
    super();
  }

  // Every host call reaches the device on a later turn, as over USB: never inside the host's
  // own handling of an input report.
  async write(values: number[] | Buffer): Promise<number> {
    const report = Buffer.from(values);
    await usbTurn();
    return this.sim.hostWrite(this, report);
  }

  async sendFeatureReport(data: number[] | Buffer): Promise<number> {
    const report = Buffer.from(data);
    await usbTurn();
    return this.sim.hostSetFeature(this, report);
  }

  async getFeatureReport(reportId: number, reportLength: number): Promise<Buffer> {
    await usbTurn();
    return this.sim.hostGetFeature(this, reportId, reportLength);
  }

  async close(): Promise<void> {
    this.sim.hostClose(this);
  }
}

export class IrisHidSimulator extends SimulatorBase {
  readonly family = 'iris-hid' as const;
  readonly modality = 'iris' as const;
  lights: IrisLights = { ir: 0, color: 0, blink: 0 };
  readonly model: string;
  readonly firmware: string;
  readonly serial: string;
  readonly reportIntervalMs: number;
  readonly pace: boolean;
  /** Input reports sent since creation. */
  reportsSent = 0;
  /** IR illuminator level when the last image was taken. */
  lastCaptureIr = 0;

  readonly #images: SimEyeImageSource;
  #handle: SimHidHandle | null = null;
  #unplugged = false;
  /**
   * A camera streams frames while an eye is in view: the next frame of the eye in view is drawn
   * as soon as it appears (and after each capture), so a capture answers with a frame that is
   * already there instead of drawing it while the host waits.
   */
  #nextFrame: { eye: number; impression: number; image: SimEyeImage } | null = null;
  #framePending: NodeJS.Immediate | null = null;
  #capturing: { tag: number; cancelled: boolean } | null = null;
  #stored: Stored | null = null;
  #lastError = 0;
  /** Reports waiting to go out, and the pacing clock. */
  #outbox: Buffer[] = [];
  #origin = 0;
  #sentInRun = 0;
  #timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #bootedAt = performance.now();

  constructor(options: IrisHidSimulatorOptions) {
    super({ device: 'iris camera', aliases: { 'no-eye': 'no-finger' }, onStall: (on) => !on && this.#schedule(0) });
    this.#images = options.images;
    this.model = options.model ?? 'SIM-IRIS-1';
    this.firmware = options.firmware ?? '1.0.0';
    this.serial = options.serial ?? 'IRS0000001';
    this.pace = options.pace ?? true;
    this.reportIntervalMs = options.reportIntervalMs ?? 1;
  }

  /** Opens the simulated device (give it to HidTransport as `open`). */
  readonly opener: HidOpener = async (path: string) => {
    if (this.#unplugged) throw new Error(`cannot open device with path ${path}`);
    const handle = new SimHidHandle(this);
    this.#handle = handle;
    return handle;
  };

  /** The device is on the bus (it starts plugged in). */
  get plugged(): boolean {
    return !this.#unplugged;
  }

  // ---------------------------------------------------------------- controls

  override present(eyeId: number): void {
    super.present(eyeId);
    this.#prepareFrame();
  }

  #prepareFrame(): void {
    if (this.#framePending) return;
    this.#framePending = setImmediate(() => {
      this.#framePending = null;
      const eye = this.presented;
      if (eye === null) return;
      const impression = this.impressions(eye) + 1;
      if (this.#nextFrame?.eye === eye && this.#nextFrame.impression === impression) return;
      this.#nextFrame = { eye, impression, image: this.#images(eye, impression) };
    });
    this.#framePending.unref?.();
  }

  #frame(eye: number, impression: number): SimEyeImage {
    const f = this.#nextFrame;
    this.#nextFrame = null;
    return f && f.eye === eye && f.impression === impression ? f.image : this.#images(eye, impression);
  }

  /** The eye in view (null: none, or the no-eye fault). */
  get eyeInView(): number | null {
    return this.presented;
  }

  /** The device disappears: the open handle's read loop fails, writes fail, opens fail. */
  unplug(): void {
    if (this.#unplugged) return;
    this.#unplugged = true;
    this.#clearOutbox();
    if (this.#capturing) this.#capturing.cancelled = true;
    const h = this.#handle;
    this.#handle = null;
    log.info('simulated iris camera unplugged');
    if (h) setImmediate(() => h.emit('error', new Error('could not read from HID device')));
  }

  /** Plugged back in: it can be opened again. */
  replug(): void {
    this.#unplugged = false;
  }

  async close(): Promise<void> {
    this.#clearOutbox();
    if (this.#capturing) this.#capturing.cancelled = true;
    this.#handle = null;
  }

  // ---------------------------------------------------------------- host side (via SimHidHandle)

  hostWrite(h: SimHidHandle, report: Buffer): number {
    this.#usable(h, 'Cannot write to hid device');
    if (this.faults.stall) return report.length;
    if (report[0] !== ReportId.Command) return report.length;
    let cmd: IrisCommandReport;
    try {
      cmd = decodeCommand(report);
    } catch {
      return report.length;
    }
    this.record(irisCommandName(cmd.command));
    switch (cmd.command) {
      case IrisCommand.StartCapture:
        this.#startCapture(cmd.tag, IrisCommands.StartCapture.decodeRequest(cmd.params));
        break;
      case IrisCommand.StopCapture: {
        // Also drops the rest of a result being sent.
        this.#clearOutbox();
        const c = this.#capturing;
        if (c) {
          c.cancelled = true;
          this.#capturing = null;
          this.#reply(IrisCommand.StartCapture, c.tag, IrisStatus.Cancelled);
        }
        this.#reply(IrisCommand.StopCapture, cmd.tag, IrisStatus.Ok);
        break;
      }
      case IrisCommand.ResendResult: {
        const s = this.#stored;
        if (!s || s.tag !== cmd.tag) {
          this.#reply(IrisCommand.ResendResult, cmd.tag, IrisStatus.NoResult);
          break;
        }
        this.#clearOutbox();
        this.#reply(IrisCommand.ResendResult, cmd.tag, IrisStatus.Ok);
        this.#sendResult(s.message);
        break;
      }
      default:
        this.#reply(cmd.command, cmd.tag, IrisStatus.UnknownCommand);
    }
    return report.length;
  }

  hostSetFeature(h: SimHidHandle, report: Buffer): number {
    this.#usable(h, 'could not send feature report to device');
    // LIGHTS is the one feature report the host may set.
    if (report[0] !== IrisFeatures.Lights.reportId) throw new Error('could not send feature report to device');
    try {
      this.lights = IrisFeatures.Lights.decode(report);
    } catch {
      throw new Error('could not send feature report to device');
    }
    this.record('SetLights');
    return report.length;
  }

  hostGetFeature(h: SimHidHandle, reportId: number, length: number): Buffer {
    this.#usable(h, 'could not get feature report from device');
    let r: Buffer;
    switch (reportId) {
      case IrisFeatures.DeviceInfo.reportId:
        r = IrisFeatures.DeviceInfo.encode({
          protocolVersion: PROTOCOL_VERSION,
          model: this.model,
          firmware: this.firmware,
          serial: this.serial,
          sensorWidth: 640,
          sensorHeight: 480,
          ppi: 460,
          capabilities: 0x03,
        });
        break;
      case IrisFeatures.Lights.reportId:
        r = IrisFeatures.Lights.encode(this.lights);
        break;
      case IrisFeatures.Status.reportId:
        r = IrisFeatures.Status.encode({
          state: this.#capturing ? 1 : this.#sendingResult() ? 2 : 0,
          eyeInView: this.eyeInView !== null,
          lastError: this.#lastError,
        });
        break;
      default:
        throw new Error('could not get feature report from device');
    }
    return r.subarray(0, Math.min(length, REPORT_SIZE));
  }

  hostClose(h: SimHidHandle): void {
    if (this.#handle === h) {
      this.#handle = null;
      this.#clearOutbox();
    }
  }

  #usable(h: SimHidHandle, message: string): void {
    if (this.#unplugged || this.#handle !== h) throw new Error(message);
  }

  // ---------------------------------------------------------------- capture

  #startCapture(tag: number, req: CaptureRequest | null): void {
    if (!req || !ALLOWED_KINDS.some((k) => k.kind === req.kind && k.width === req.width && k.height === req.height)) {
      this.#lastError = IrisStatus.BadParam;
      this.#reply(IrisCommand.StartCapture, tag, IrisStatus.BadParam);
      return;
    }
    if (this.#capturing || this.#sendingResult()) {
      this.#lastError = IrisStatus.Busy;
      this.#reply(IrisCommand.StartCapture, tag, IrisStatus.Busy);
      return;
    }
    const job = { tag, cancelled: false };
    this.#capturing = job;
    this.#reply(IrisCommand.StartCapture, tag, IrisStatus.Ok);
    void this.#runCapture(job, req);
  }

  async #runCapture(job: { tag: number; cancelled: boolean }, req: CaptureRequest): Promise<void> {
    const deadline = performance.now() + req.timeoutMs;
    while (this.eyeInView === null || this.faults.stall) {
      if (job.cancelled) return;
      if (performance.now() >= deadline) {
        if (this.#capturing === job) this.#capturing = null;
        this.#lastError = IrisStatus.NoEye;
        return this.#reply(IrisCommand.StartCapture, job.tag, IrisStatus.NoEye);
      }
      await sleep(Math.min(5, Math.max(1, deadline - performance.now())));
    }
    if (job.cancelled) return;
    const eye = this.eyeInView!;
    const impression = this.nextImpression(eye);
    const rnd = seededRandom((eye * 7919 + impression) >>> 0);
    const low = this.faults.lowQuality;
    const quality = low ? 25 : 80 + Math.floor(rnd() * 16);
    if (this.#capturing === job) this.#capturing = null;
    if (quality < req.minQuality) {
      this.#lastError = IrisStatus.LowQuality;
      return this.#reply(IrisCommand.StartCapture, job.tag, IrisStatus.LowQuality);
    }
    this.lastCaptureIr = this.lights.ir;
    const shot = renderKind(this.#frame(eye, impression), req);
    this.#prepareFrame();
    const pixels = low ? degradeImage(shot.pixels, eye ^ impression) : shot.pixels;
    const message = encodeResult({
      tag: job.tag,
      kind: req.kind,
      quality,
      width: req.width,
      height: req.height,
      pupilX: Math.round(shot.cx),
      pupilY: Math.round(shot.cy),
      irisRadius: Math.round(shot.r),
      flags: this.lights.ir > 0 ? 1 : 0,
      captureMs: Math.round(performance.now() - this.#bootedAt),
      pixels,
    });
    this.#stored = { tag: job.tag, message };
    this.#lastError = 0;
    this.#sendResult(message);
  }

  #sendResult(message: Buffer): void {
    let out = message;
    if (this.faults.take('bad-checksum')) {
      out = Buffer.from(message);
      out[out.length - 1]! ^= 0xff;
    }
    let chunks = chunkResult(out);
    if (chunks.length > 2 && this.faults.take('dropped-bytes')) {
      const victim = Math.floor(chunks.length / 2);
      chunks = chunks.filter((_, i) => i !== victim);
    }
    this.#enqueue(chunks);
  }

  #reply(command: number, tag: number, status: number): void {
    this.#enqueue([encodeReply({ command, tag, status, detail: Buffer.alloc(0) })]);
  }

  // ---------------------------------------------------------------- paced input reports

  #enqueue(reports: Buffer[]): void {
    if (this.#unplugged) return;
    if (this.#outbox.length === 0) {
      this.#origin = performance.now();
      this.#sentInRun = 0;
    }
    for (const r of reports) this.#outbox.push(r);
    this.#schedule(0);
  }

  /** Result chunks are still waiting to go out (replies do not make the camera busy). */
  #sendingResult(): boolean {
    return this.#outbox.some((r) => r[1] === InputType.ResultChunk);
  }

  #clearOutbox(): void {
    this.#outbox = [];
    if (this.#timer) {
      clearTimeout(this.#timer as NodeJS.Timeout);
      clearImmediate(this.#timer as NodeJS.Immediate);
    }
    this.#timer = undefined;
  }

  #schedule(delay: number): void {
    if (this.#timer || this.faults.stall || this.#outbox.length === 0) return;
    const pump = () => {
      this.#timer = undefined;
      this.#pump();
    };
    // Unpaced, the next batch goes out as soon as the event loop has turned once: a timer of 0 ms
    // waits at least 1 ms, some 20 ms a 640×480 frame that no camera would take.
    this.#timer = delay === 0 && !this.pace ? setImmediate(pump) : setTimeout(pump, delay);
  }

  #pump(): void {
    const h = this.#handle;
    if (!h || this.#unplugged || this.faults.stall) return;
    let due: number;
    if (this.pace) {
      due = Math.floor((performance.now() - this.#origin) / this.reportIntervalMs) + 1 - this.#sentInRun;
    } else {
      due = 256;
    }
    const n = Math.min(Math.max(0, due), this.#outbox.length);
    const batch = this.#outbox.splice(0, n);
    this.#sentInRun += n;
    for (const report of batch) {
      if (this.#handle !== h || this.#unplugged) break;
      h.emit('data', report);
      this.reportsSent++;
      const left = this.faults.unplugAfterBytes;
      if (left !== null) {
        this.faults.unplugAfterBytes = left - report.length > 0 ? left - report.length : null;
        if (this.faults.unplugAfterBytes === null) this.unplug();
      }
    }
    if (this.#outbox.length === 0) return;
    const next = this.pace ? Math.max(0, this.#origin + this.#sentInRun * this.reportIntervalMs - performance.now()) : 0;
    this.#schedule(Math.min(4, next));
  }
}

/** The picture for a capture request: the fitted frame, or a crop around the iris. */
export function renderKind(
  img: SimEyeImage,
  req: { kind: number; width: number; height: number },
): { pixels: Uint8Array; cx: number; cy: number; r: number } {
  const iris = img.truth?.iris ?? { x: img.width / 2, y: img.height / 2, r: Math.min(img.width, img.height) / 4 };
  if (req.kind === IrisImageKind.Vga) {
    const scale = Math.max(req.width / img.width, req.height / img.height);
    const offX = (img.width * scale - req.width) / 2;
    const offY = (img.height * scale - req.height) / 2;
    return { pixels: fitImage(img, req.width, req.height), cx: iris.x * scale - offX, cy: iris.y * scale - offY, r: iris.r * scale };
  }
  // Cropped (ISO/IEC 19794-6 kind 3): 4:3 window with 0.6 R left/right and 0.2 R above/below.
  const winW = 3.2 * iris.r;
  const winH = 2.4 * iris.r;
  const x0 = iris.x - winW / 2;
  const y0 = iris.y - winH / 2;
  const out = new Uint8Array(req.width * req.height);
  const masked = req.kind === IrisImageKind.CroppedMasked;
  for (let y = 0; y < req.height; y++) {
    const sy = y0 + ((y + 0.5) * winH) / req.height;
    const iy = Math.min(img.height - 1, Math.max(0, Math.floor(sy)));
    for (let x = 0; x < req.width; x++) {
      const sx = x0 + ((x + 0.5) * winW) / req.width;
      if (masked && Math.hypot(sx - iris.x, sy - iris.y) > iris.r) {
        out[y * req.width + x] = MASK_VALUE;
        continue;
      }
      const ix = Math.min(img.width - 1, Math.max(0, Math.floor(sx)));
      out[y * req.width + x] = img.pixels[iy * img.width + ix]!;
    }
  }
  return { pixels: out, cx: req.width / 2, cy: req.height / 2, r: (iris.r * req.width) / winW };
}

/** Pixel bytes plus header and CRC: what one result of this size costs on the wire. */
export function resultWireBytes(width: number, height: number): number {
  return RESULT_HEADER_SIZE + width * height + 4;
}

export type { SimEyeImage };
