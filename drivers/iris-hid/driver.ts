/**
 * The iris camera driver (protocol version 1, PROTOCOL.md) over a ReportTransport.
 *
 * One capture is a small state machine:
 *   send START_CAPTURE ─► await reply (OK, or a named error)
 *   ─► await the result: its chunks, or a late reply with an error (NO_EYE, LOW_QUALITY, CANCELLED)
 *   ─► reassemble: chunk `seq` must follow the previous one; a gap or a bad CRC-32 asks the camera
 *      for RESEND_RESULT (at most `retries` times), chunks of the abandoned transfer are skipped
 *      until a first chunk starts again
 *   ─► decode and return the image.
 * Timeouts: the reply within `timeoutMs`; the first chunk within the eye-wait time plus
 * `timeoutMs`; after that, each chunk within `timeoutMs` of the previous (a stall fails fast).
 * A capture that fails on the host's side (gave up resending, timed out) sends STOP_CAPTURE so
 * the camera is idle for the next one.
 * A disconnect fails everything pending at once with `TRANSPORT_DISCONNECTED`.
 */
import { AgentError, isAgentError } from '../../src/core/errors.js';
import { logger } from '../../src/core/logger.js';
import { awaitAnswer, type Answer } from '../exchange.js';
import type { ReportTransport } from '../transport/transport.js';
import { IrisCommands, IrisFeatures, type IrisCommandCodec, type IrisFeatureCodec } from './commands.js';
import {
  ALLOWED_KINDS,
  CHUNK_FLAG_FIRST,
  CHUNK_PAYLOAD,
  chunkFlags,
  chunkSeq,
  copyChunkPayload,
  decodeChunk,
  decodeReply,
  decodeResult,
  encodeCommand,
  InputType,
  IRIS_STATUS,
  IrisImageKind,
  IrisStatus,
  readResultHeader,
  REPORT_SIZE,
  type CaptureRequest,
  type IrisDeviceInfo,
  type IrisLights,
  type IrisReply,
  type IrisResult,
  type IrisStatusReport,
} from './protocol.js';

const log = logger('drivers:iris-hid');

export class IrisStatusError extends AgentError {
  readonly status: number;

  constructor(status: number, command: string) {
    const info = IRIS_STATUS[status];
    super(
      info ? `DRIVER_IRIS_${info.name}` : 'DRIVER_IRIS_UNKNOWN_STATUS',
      `iris camera ${command}: ${info ? info.message : `unknown status 0x${status.toString(16)}`}`,
      { family: 'iris-hid', command, deviceCode: status, deviceName: info?.name ?? 'UNKNOWN' },
      { hint: info?.hint ?? 'Check the camera firmware version.', retryable: info?.retryable ?? false },
    );
    this.status = status;
  }
}

export interface IrisHidDriverOptions {
  /** Reply timeout, and the longest gap between two chunks (ms, default 1000). */
  timeoutMs?: number;
  /** RESEND_RESULT requests after a gap or a bad CRC (default 2). */
  retries?: number;
}

interface ReplyWaiter {
  command: number;
  tag: number;
  answer: Answer<IrisReply>;
}

interface Transfer {
  tag: number;
  onReply(r: IrisReply): void;
  /** One RESULT_CHUNK input report (without its id, at least 5 bytes), read in place. */
  onChunk(body: Buffer): void;
  fail(e: Error): void;
}

export class IrisHidDriver {
  readonly transport: ReportTransport;
  readonly timeoutMs: number;
  readonly retries: number;
  /** Resend requests made (gaps and CRC errors), for diagnostics. */
  resends = 0;
  #tag = 0;
  #waiters: ReplyWaiter[] = [];
  #transfer: Transfer | null = null;
  #lost: Error | null = null;
  readonly #onData = (body: Buffer) => this.#input(body);
  readonly #onDisconnect = (err: Error) => {
    this.#lost = err;
    for (const w of this.#waiters.splice(0)) w.answer.reject(err);
    this.#transfer?.fail(err);
  };

  constructor(transport: ReportTransport, options: IrisHidDriverOptions = {}) {
    this.transport = transport;
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.retries = options.retries ?? 2;
    transport.on('data', this.#onData);
    transport.on('disconnect', this.#onDisconnect);
  }

  detach(): void {
    this.transport.off('data', this.#onData);
    this.transport.off('disconnect', this.#onDisconnect);
  }

  /** Forgets an earlier disconnect after the transport was reopened. */
  resetConnection(): void {
    this.#lost = null;
  }

  async deviceInfo(): Promise<IrisDeviceInfo> {
    return this.#getFeature(IrisFeatures.DeviceInfo);
  }

  async status(): Promise<IrisStatusReport> {
    return this.#getFeature(IrisFeatures.Status);
  }

  async lights(): Promise<IrisLights> {
    return this.#getFeature(IrisFeatures.Lights);
  }

  async setLights(lights: IrisLights): Promise<void> {
    await this.transport.sendFeatureReport(IrisFeatures.Lights.encode(lights));
  }

  async #getFeature<T>(feature: IrisFeatureCodec<T>): Promise<T> {
    return feature.decode(await this.transport.getFeatureReport(feature.reportId, REPORT_SIZE));
  }

  async stopCapture(): Promise<void> {
    const tag = this.#nextTag();
    const reply = await this.#command(IrisCommands.StopCapture, tag, {});
    if (reply.status !== IrisStatus.Ok) throw new IrisStatusError(reply.status, 'StopCapture');
  }

  /** Captures one eye image. Defaults: the whole 640×480 frame, 5 s to wait for an eye, any quality. */
  async capture(request: Partial<CaptureRequest> = {}): Promise<IrisResult> {
    const req: CaptureRequest = { kind: IrisImageKind.Vga, width: 640, height: 480, timeoutMs: 5000, minQuality: 0, ...request };
    if (!ALLOWED_KINDS.some((k) => k.kind === req.kind && k.width === req.width && k.height === req.height)) {
      throw new AgentError(
        'DRIVER_BAD_PARAM',
        `no iris image kind ${req.kind} at ${req.width}×${req.height}`,
        { family: 'iris-hid', ...req },
        { hint: 'Use kind 2 (640×480), 3 or 7 (640×480 or 320×240).' },
      );
    }
    if (this.#transfer)
      throw new AgentError(
        'DRIVER_BUSY',
        'an iris capture is already running',
        { family: 'iris-hid' },
        { hint: 'Wait for it or stop it first.', retryable: true },
      );
    const tag = this.#nextTag();
    const result = this.#receive(tag, req);
    try {
      const reply = await this.#command(IrisCommands.StartCapture, tag, req);
      if (reply.status !== IrisStatus.Ok) throw new IrisStatusError(reply.status, 'StartCapture');
    } catch (err) {
      (this.#transfer as Transfer | null)?.fail(err as Error);
      await result.catch(() => undefined);
      throw err;
    }
    return result;
  }

  #nextTag(): number {
    this.#tag = (this.#tag + 1) & 0xff;
    return this.#tag;
  }

  #command<Req>(codec: IrisCommandCodec<Req>, tag: number, req: Req): Promise<IrisReply> {
    if (this.#lost) return Promise.reject(this.#lost);
    const command = codec.command;
    const waiter: ReplyWaiter = {
      command,
      tag,
      answer: awaitAnswer(this.timeoutMs, () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        return new AgentError(
          'DRIVER_TIMEOUT',
          `iris camera did not answer ${codec.name} within ${this.timeoutMs} ms`,
          { family: 'iris-hid', command: codec.name, ms: this.timeoutMs, path: this.transport.path },
          { hint: 'Check the USB cable; unplug and replug the camera.', retryable: true },
        );
      }),
    };
    this.#waiters.push(waiter);
    this.transport.write(encodeCommand(command, tag, codec.encodeRequest(req))).catch((err: Error) => {
      this.#waiters = this.#waiters.filter((w) => w !== waiter);
      waiter.answer.reject(err);
    });
    return waiter.answer.promise;
  }

  /**
   * Waits for the result of capture `tag`, reassembling and checking it. The first chunk's header
   * must announce the kind and size asked for (so at most 640×480 pixels) before a buffer is sized
   * from it; anything else fails the capture with DRIVER_FRAME.
   */
  #receive(tag: number, req: CaptureRequest): Promise<IrisResult> {
    return new Promise<IrisResult>((resolve, reject) => {
      let buf: Buffer | null = null;
      let filled = 0;
      let total = 0;
      let nextSeq = 0;
      let resends = 0;
      let timer: NodeJS.Timeout | undefined;
      // What is awaited now, and by when. A chunk only moves the deadline (`progress`): the one timer
      // is set again when it fires early, not cleared and made anew for each of a frame's ~5,200
      // chunks, which cost more than the reassembly itself.
      let stage = '';
      let dueSeq = -1; // the chunk awaited, when `stage` is a chunk's (its name made only if it times out)
      let waitMs = 0;
      let deadline = 0;
      const expire = () => {
        const left = deadline - performance.now();
        if (left > 0) {
          timer = setTimeout(expire, left);
          return;
        }
        if (dueSeq >= 0) stage = `result chunk ${dueSeq}`;
        finish(
          new AgentError(
            'DRIVER_TIMEOUT',
            `iris camera: no ${stage} within ${waitMs} ms`,
            { family: 'iris-hid', stage, ms: waitMs, path: this.transport.path },
            { hint: 'The camera stopped sending; check the USB cable and power, then unplug and replug it.', retryable: true },
          ),
        );
      };
      const arm = (ms: number, what: string) => {
        clearTimeout(timer);
        stage = what;
        dueSeq = -1;
        waitMs = ms;
        deadline = performance.now() + ms;
        timer = setTimeout(expire, ms);
      };
      /** The next chunk is due within `timeoutMs` of this one (the timer already runs). */
      const progress = (seq: number) => {
        dueSeq = seq;
        waitMs = this.timeoutMs;
        deadline = performance.now() + this.timeoutMs;
      };
      const finish = (err: Error | null, result?: IrisResult) => {
        clearTimeout(timer);
        if (this.#transfer === transfer) this.#transfer = null;
        const code = (err as AgentError | null)?.code;
        if (code === 'DRIVER_SEQUENCE' || code === 'DRIVER_CHECKSUM' || code === 'DRIVER_TIMEOUT' || code === 'DRIVER_FRAME') {
          // Leave the camera idle: it may still be waiting for an eye or sending a result.
          this.stopCapture().catch((e: unknown) => log.debug({ err: String(e) }, 'stop after a failed capture did not go through'));
        }
        if (err) reject(err);
        else resolve(result!);
      };
      const restart = (why: AgentError) => {
        buf = null;
        filled = 0;
        nextSeq = 0;
        if (resends >= this.retries) return finish(why);
        resends++;
        this.resends++;
        log.debug({ tag, why: why.code, resends }, 'asking the iris camera to resend its result');
        arm(this.timeoutMs, 'resent result');
        this.#command(IrisCommands.ResendResult, tag, {}).then(
          (r) => {
            if (r.status !== IrisStatus.Ok) finish(new IrisStatusError(r.status, 'ResendResult'));
          },
          (e: Error) => finish(e),
        );
      };
      const transfer: Transfer = {
        tag,
        onReply: (r) => {
          if (r.command === IrisCommands.StartCapture.command && r.tag === tag && r.status !== IrisStatus.Ok)
            finish(new IrisStatusError(r.status, 'StartCapture'));
        },
        onChunk: (body) => {
          const seq = chunkSeq(body);
          if (buf === null) {
            // Skip what is left of an abandoned transfer until a first chunk starts again (the tag is
            // byte 5 of the result message). Decoded whole: once a transfer.
            if (seq !== 0 || !(chunkFlags(body) & CHUNK_FLAG_FIRST)) return;
            const first = decodeChunk(body).payload;
            if (first[5] !== tag) return;
            const header = readResultHeader(first);
            if (header === null) return;
            if (header.kind !== req.kind || header.width !== req.width || header.height !== req.height) {
              return finish(
                new AgentError(
                  'DRIVER_FRAME',
                  `iris camera announced a kind ${header.kind} ${header.width}×${header.height} result for a kind ${req.kind} ${req.width}×${req.height} capture`,
                  { family: 'iris-hid', kind: header.kind, width: header.width, height: header.height },
                  { hint: 'The camera does not follow protocol version 1: check its firmware.' },
                ),
              );
            }
            total = header.total;
            buf = Buffer.alloc(Math.ceil(total / CHUNK_PAYLOAD) * CHUNK_PAYLOAD);
          } else if (seq !== nextSeq) {
            return restart(
              new AgentError(
                'DRIVER_SEQUENCE',
                `iris result chunk ${seq} came where ${nextSeq} was due`,
                { family: 'iris-hid', expected: nextSeq, got: seq },
                { hint: 'Reports were lost on the USB link; check the cable and the hub.', retryable: true },
              ),
            );
          }
          // In place: the buffer was sized from the header for every chunk (seq < its chunk count here).
          copyChunkPayload(body, buf, seq * CHUNK_PAYLOAD);
          filled = Math.min(total, (seq + 1) * CHUNK_PAYLOAD);
          nextSeq = seq + 1;
          if (seq === 0) arm(this.timeoutMs, `result chunk ${nextSeq}`);
          else progress(nextSeq);
          if (filled < total) return;
          try {
            finish(null, decodeResult(buf.subarray(0, total)));
          } catch (err) {
            const e = err as AgentError;
            if (e.code !== 'DRIVER_CHECKSUM') return finish(e);
            restart(e);
          }
        },
        fail: (e) => finish(e),
      };
      this.#transfer = transfer;
      arm(req.timeoutMs + this.timeoutMs, 'eye image');
    });
  }

  /**
   * One input report. Runs inside the transport's data listener, so it never throws: whatever a
   * device sends that breaks the protocol fails the capture it belongs to (an AgentError), or is
   * dropped and logged when no capture waits.
   */
  #input(body: Buffer): void {
    try {
      this.#dispatch(body);
    } catch (err) {
      const e = isAgentError(err)
        ? err
        : new AgentError(
            'DRIVER_FRAME',
            `iris camera sent an input report the driver cannot read: ${(err as Error).message}`,
            { family: 'iris-hid', length: body.length },
            { cause: err },
          );
      if (this.#transfer) this.#transfer.fail(e);
      else log.warn({ code: e.code, err: e.message }, 'input report dropped');
    }
  }

  #dispatch(body: Buffer): void {
    if (body.length < 5) return;
    if (body[0] === InputType.Reply) {
      const reply = decodeReply(body);
      const i = this.#waiters.findIndex((w) => w.command === reply.command && w.tag === reply.tag);
      if (i >= 0) {
        const [w] = this.#waiters.splice(i, 1);
        w!.answer.resolve(reply);
        return;
      }
      this.#transfer?.onReply(reply);
      return;
    }
    if (body[0] === InputType.ResultChunk && this.#transfer) this.#transfer.onChunk(body);
  }
}
