import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { IrisHidDriver, IrisStatusError } from '../../../../drivers/iris-hid/driver.js';
import { IrisHidSimulator } from '../../../../drivers/iris-hid/simulator.js';
import { irisCommandName, IrisCommands } from '../../../../drivers/iris-hid/commands.js';
import { decodeCommand, encodeReply, MASK_VALUE, type IrisResult } from '../../../../drivers/iris-hid/protocol.js';
import { seededRandom } from '../../../../drivers/simulator/images.js';
import { HidTransport } from '../../../../drivers/transport/hid-transport.js';
import type { ReportTransport, TransportEvents } from '../../../../drivers/transport/transport.js';
import type { AgentError } from '../../../../src/core/errors.js';
import { TypedEmitter } from '../../../../src/core/events.js';
import { croppedResult, resultBodies } from '../../../helpers/iris-result.js';
import { testEye } from './eye.fixture.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function setup(sim: { pace?: boolean } = {}, driver: { timeoutMs?: number; retries?: number } = {}) {
  const simulator = new IrisHidSimulator({ images: testEye, pace: sim.pace ?? false });
  const transport = new HidTransport({ path: 'sim:iris', open: simulator.opener });
  await transport.open();
  const d = new IrisHidDriver(transport, { timeoutMs: driver.timeoutMs ?? 300, retries: driver.retries ?? 2 });
  cleanup.push(async () => {
    d.detach();
    await transport.close();
    await simulator.close();
  });
  return { simulator, transport, driver: d };
}

describe('iris HID driver against the simulator', () => {
  it('reads device info, status and lights through feature reports', async () => {
    const { driver, simulator } = await setup();
    expect(await driver.deviceInfo()).toEqual({
      protocolVersion: 1,
      model: 'SIM-IRIS-1',
      firmware: '1.0.0',
      serial: 'IRS0000001',
      sensorWidth: 640,
      sensorHeight: 480,
      ppi: 460,
      capabilities: 3,
    });
    expect(await driver.status()).toEqual({ state: 0, eyeInView: false, lastError: 0 });
    simulator.present(5);
    expect((await driver.status()).eyeInView).toBe(true);
    await driver.setLights({ ir: 200, color: 1, blink: 1 });
    expect(simulator.lights).toEqual({ ir: 200, color: 1, blink: 1 });
    expect(await driver.lights()).toEqual({ ir: 200, color: 1, blink: 1 });
  });

  it('captures the 640×480 frame with quality and geometry', async () => {
    const { driver, simulator } = await setup();
    simulator.present(7);
    const r = await driver.capture();
    expect(r).toMatchObject({ kind: 2, width: 640, height: 480, irisRadius: 100 });
    expect(r.quality).toBeGreaterThanOrEqual(80);
    expect(r.pixels.length).toBe(640 * 480);
    expect(r.pixels[r.pupilY * 640 + r.pupilX]).toBe(10);
    expect(simulator.received).toEqual(['StartCapture']);
  });

  it('captures the cropped and the cropped-and-masked kinds at 640×480 and 320×240', async () => {
    const { driver, simulator } = await setup();
    simulator.present(3);
    for (const [kind, width, height] of [
      [3, 640, 480],
      [3, 320, 240],
      [7, 640, 480],
      [7, 320, 240],
    ] as const) {
      const r = await driver.capture({ kind, width, height });
      expect(r).toMatchObject({ kind, width, height, pupilX: width / 2, pupilY: height / 2 });
      // The iris fills 2R of 3.2R across: radius = width / 3.2.
      expect(r.irisRadius).toBe(Math.round(width / 3.2));
      const corner = r.pixels[0];
      if (kind === 7) expect(corner).toBe(MASK_VALUE);
      else expect(corner).toBe(200);
      expect(r.pixels[(height / 2) * width + width / 2]).toBe(10);
    }
  });

  it('refuses a kind the protocol does not have, on the host and on the camera', async () => {
    const { driver, transport, simulator } = await setup();
    await expect(driver.capture({ kind: 2, width: 320, height: 240 })).rejects.toMatchObject({ code: 'DRIVER_BAD_PARAM' });
    // Straight to the camera: it answers BAD_PARAM.
    const { encodeCommand, encodeCaptureParams } = await import('../../../../drivers/iris-hid/protocol.js');
    const reply = new Promise<Buffer>((r) => transport.once('data', r));
    await transport.write(encodeCommand(0x10, 99, encodeCaptureParams({ kind: 9, width: 1, height: 1, timeoutMs: 10, minQuality: 0 })));
    const body = await reply;
    expect([body[0], body[1], body[2], body[3]]).toEqual([0x01, 0x10, 99, 0x04]);
    expect(simulator.received).toEqual(['StartCapture']);
  });

  it('names the camera errors: no eye, low quality, cancelled, unknown command', async () => {
    const { driver, simulator } = await setup();
    const noEye = await driver.capture({ timeoutMs: 30 }).catch((e: unknown) => e as IrisStatusError);
    expect(noEye).toBeInstanceOf(IrisStatusError);
    expect(noEye).toMatchObject({ code: 'DRIVER_IRIS_NO_EYE', retryable: true, context: { deviceCode: 2, deviceName: 'NO_EYE' } });
    simulator.present(1);
    simulator.setFault('low-quality', true);
    await expect(driver.capture({ minQuality: 60 })).rejects.toMatchObject({ code: 'DRIVER_IRIS_LOW_QUALITY' });
    const poor = await driver.capture();
    expect(poor.quality).toBe(25);
    simulator.setFault('low-quality', false);
    simulator.lift();
    const pending = driver.capture({ timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 20));
    await driver.stopCapture();
    await expect(pending).rejects.toMatchObject({ code: 'DRIVER_IRIS_CANCELLED' });
  });

  it('asks for a resend after a bad CRC-32 and after a lost report, and gets the image', async () => {
    const { driver, simulator } = await setup();
    simulator.present(2);
    simulator.setFault('bad-checksum', 1);
    const a = await driver.capture();
    expect(a.pixels.length).toBe(640 * 480);
    simulator.setFault('dropped-bytes', 1);
    const b = await driver.capture();
    expect(b.pixels.length).toBe(640 * 480);
    expect(driver.resends).toBe(2);
    expect(simulator.received.filter((c) => c === 'ResendResult')).toHaveLength(2);
  });

  it('gets the exact image back whenever the faults fit in its resends, and a typed error otherwise', async () => {
    const { driver, simulator } = await setup({}, { retries: 2 });
    simulator.present(6);
    const clean = await driver.capture({ kind: 3, width: 320, height: 240 });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), async (drops, badCrcs) => {
        simulator.setFault('dropped-bytes', drops);
        simulator.setFault('bad-checksum', badCrcs);
        const before = driver.resends;
        const r = await driver.capture({ kind: 3, width: 320, height: 240 }).catch((e: unknown) => e as { code: string });
        // Each copy the camera sends uses up one pending fault of each kind.
        const copiesNeeded = Math.max(drops, badCrcs) + 1;
        if (copiesNeeded <= 3) {
          expect(r).toMatchObject({ width: 320, height: 240 });
          // Same eye, next impression: the stand-in differs by a pixel shift at most, so compare the pupil.
          expect((r as typeof clean).pixels[120 * 320 + 160]).toBe(clean.pixels[120 * 320 + 160]);
          expect(driver.resends - before).toBe(copiesNeeded - 1);
        } else {
          expect((r as { code: string }).code).toMatch(/^DRIVER_(SEQUENCE|CHECKSUM)$/);
        }
        simulator.setFault('dropped-bytes', 0);
        simulator.setFault('bad-checksum', 0);
      }),
      { numRuns: 16 },
    );
  });

  it("ignores input reports of unknown types and chunks of nobody's capture", async () => {
    const { driver, simulator } = await setup();
    simulator.present(6);
    const { encodeChunk } = await import('../../../../drivers/iris-hid/protocol.js');
    // As if the camera sent them: a stray chunk and a report of an unknown type, before any capture.
    const incoming = driver.transport as unknown as { emit(event: 'data', body: Buffer): void };
    incoming.emit('data', encodeChunk(3, 0, Buffer.alloc(59, 1)).subarray(1));
    incoming.emit('data', Buffer.from([0x7f, 1, 2, 3, 4, 5]));
    expect((await driver.capture({ kind: 3, width: 320, height: 240 })).pixels.length).toBe(320 * 240);
  });

  it('fails the capture with DRIVER_FRAME when a result announces more than the protocol allows, throwing nothing from the listener', async () => {
    const { driver, simulator } = await setup({}, { timeoutMs: 300 });
    const { encodeChunk, encodeResult, CHUNK_FLAG_FIRST, RESULT_HEADER_SIZE } = await import('../../../../drivers/iris-hid/protocol.js');
    const incoming = driver.transport as unknown as { emit(event: 'data', body: Buffer): boolean };
    // A first chunk of capture `tag` whose header says `pixelBytes` for `width`×`height`.
    const forged = (tag: number, pixelBytes: number, width = 640, height = 480) => {
      const head = Buffer.from(
        encodeResult({
          tag,
          kind: 2,
          quality: 90,
          width: 1,
          height: 1,
          pupilX: 0,
          pupilY: 0,
          irisRadius: 0,
          flags: 0,
          captureMs: 0,
          pixels: new Uint8Array(1),
        }).subarray(0, RESULT_HEADER_SIZE),
      );
      head.writeUInt16LE(width, 8);
      head.writeUInt16LE(height, 10);
      head.writeUInt32LE(pixelBytes >>> 0, 24);
      return encodeChunk(0, CHUNK_FLAG_FIRST, Buffer.concat([head, Buffer.alloc(59 - RESULT_HEADER_SIZE)])).subarray(1);
    };
    // The tag of the last START_CAPTURE the driver wrote (report 01 10 <tag> ...).
    const written: Buffer[] = [];
    const write = driver.transport.write.bind(driver.transport);
    driver.transport.write = (data: Uint8Array) => {
      written.push(Buffer.from(data));
      return write(data);
    };
    const lastCaptureTag = () => written.filter((w) => w[1] === 0x10).at(-1)![2]!;
    simulator.lift(); // the camera waits for an eye and sends nothing of its own
    const before = process.memoryUsage().arrayBuffers;
    for (const [pixelBytes, width, height] of [
      [0xfffffff0, 640, 480],
      [0x7fffffff, 640, 480],
      [640 * 480 + 1, 640, 480],
      [320 * 240, 640, 480],
    ] as const) {
      const capture = driver.capture({ timeoutMs: 5000 });
      await new Promise((r) => setTimeout(r, 20));
      expect(() => incoming.emit('data', forged(lastCaptureTag(), pixelBytes, width, height))).not.toThrow();
      await expect(capture).rejects.toMatchObject({ code: 'DRIVER_FRAME', context: expect.objectContaining({ family: 'iris-hid' }) });
    }
    // A header within bounds but of another size than asked for is refused the same way.
    const other = driver.capture({ timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 20));
    incoming.emit('data', forged(lastCaptureTag(), 320 * 240, 320, 240));
    await expect(other).rejects.toMatchObject({ code: 'DRIVER_FRAME' });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
    // The camera is stopped after each refusal and the next capture works.
    await new Promise((r) => setTimeout(r, 20));
    expect(simulator.received.filter((c) => c === 'StopCapture').length).toBeGreaterThanOrEqual(5);
    simulator.present(3);
    expect((await driver.capture({ kind: 3, width: 320, height: 240 })).pixels.length).toBe(320 * 240);
  });

  it('gives up with DRIVER_CHECKSUM when every copy is damaged', async () => {
    const { driver, simulator } = await setup({}, { retries: 1 });
    simulator.present(2);
    simulator.setFault('bad-checksum', true);
    await expect(driver.capture()).rejects.toMatchObject({ code: 'DRIVER_CHECKSUM' });
  });

  it('times out fast when the camera stalls in the middle of a result', async () => {
    const { driver, simulator, transport } = await setup({ pace: true }, { timeoutMs: 150 });
    simulator.present(2);
    let lastReportAt = 0;
    transport.on('data', () => {
      lastReportAt = Date.now();
    });
    // The stall once the result is flowing (a few dozen reports out), however slow the machine.
    const watch = setInterval(() => {
      if (simulator.reportsSent < 30) return;
      simulator.setFault('stall', true);
      clearInterval(watch);
    }, 2);
    await expect(driver.capture()).rejects.toMatchObject({
      code: 'DRIVER_TIMEOUT',
      retryable: true,
      message: expect.stringMatching(/^iris camera: no result chunk \d+ within 150 ms$/),
      context: { stage: expect.stringMatching(/^result chunk \d+$/), ms: 150 },
    });
    clearInterval(watch);
    // The full gap after the last report, and not much more.
    expect(Date.now() - lastReportAt).toBeGreaterThanOrEqual(150 - 2);
    expect(Date.now() - lastReportAt).toBeLessThan(1000);
  });

  // The gap allowed is between two chunks, not over the whole result: each chunk moves the deadline.
  it('takes a result that lasts far longer than the gap allowed, chunk after chunk', async () => {
    const { driver, simulator } = await setup({ pace: true }, { timeoutMs: 400 });
    simulator.present(2);
    const t0 = Date.now();
    const r = await driver.capture({ kind: 3, width: 320, height: 240 });
    expect(r.pixels.length).toBe(320 * 240);
    expect(Date.now() - t0).toBeGreaterThan(1200); // about 1,300 reports at 1 ms: three times the gap
  });

  it('fails with TRANSPORT_DISCONNECTED at once when unplugged in the middle of a result', async () => {
    const { driver, simulator, transport } = await setup({ pace: true }, { timeoutMs: 2000 });
    simulator.present(2);
    setTimeout(() => simulator.unplug(), 60);
    const t0 = Date.now();
    await expect(driver.capture()).rejects.toMatchObject({ code: 'TRANSPORT_DISCONNECTED' });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(transport.isOpen).toBe(false);
    await expect(driver.status()).rejects.toMatchObject({ code: 'TRANSPORT_DISCONNECTED' });
  });

  it('paces the result at one report a millisecond', async () => {
    const { driver, simulator } = await setup({ pace: true });
    simulator.present(4);
    const t0 = performance.now();
    const r = await driver.capture({ kind: 3, width: 320, height: 240 });
    const ms = performance.now() - t0;
    const reports = Math.ceil((32 + 320 * 240 + 4) / 59);
    expect(r.pixels.length).toBe(320 * 240);
    expect(ms).toBeGreaterThanOrEqual(reports * 0.95);
  });
});

/**
 * A camera the test speaks for: every command is answered OK, and each START_CAPTURE or
 * RESEND_RESULT hands its tag and the copy's number (0 for the first) to `send`, which returns the
 * input reports (without report id) to deliver for it, a batch a turn of the event loop. As the
 * protocol says, a later command stops a copy still being sent.
 */
class HandFedCamera extends TypedEmitter<TransportEvents> implements ReportTransport {
  readonly kind = 'hid' as const;
  readonly path = 'hand-fed:iris';
  readonly isOpen = true;
  commands: string[] = [];
  #copies = 0;
  #sending = 0;

  constructor(private readonly send: (tag: number, copy: number) => Buffer[]) {
    super();
  }

  async open(): Promise<void> {}
  async close(): Promise<void> {}
  async sendFeatureReport(): Promise<void> {}
  async getFeatureReport(_id: number, length: number): Promise<Buffer> {
    return Buffer.alloc(length);
  }
  async write(data: Uint8Array): Promise<void> {
    const cmd = decodeCommand(Buffer.from(data));
    this.commands.push(irisCommandName(cmd.command));
    const sending = ++this.#sending;
    setImmediate(() => {
      this.emit('data', encodeReply({ command: cmd.command, tag: cmd.tag, status: 0, detail: Buffer.alloc(0) }).subarray(1));
      if (cmd.command !== IrisCommands.StartCapture.command && cmd.command !== IrisCommands.ResendResult.command) return;
      const reports = this.send(cmd.tag, this.#copies++);
      const pump = (from: number) => {
        if (sending !== this.#sending) return;
        for (const r of reports.slice(from, from + 200)) this.emit('data', r);
        if (from + 200 < reports.length) setImmediate(() => pump(from + 200));
      };
      setImmediate(() => pump(0));
    });
  }
}

/** A 320×240 cropped result of capture `tag` whose pixels take every byte value (a misplaced byte shows). */
function handFedResult(tag: number, seed = 1): IrisResult {
  const rnd = seededRandom(seed);
  return croppedResult(
    tag,
    Uint8Array.from({ length: 320 * 240 }, () => Math.floor(rnd() * 256)),
  );
}

/** `r` is the result `expected(r.tag)`, every pixel included. */
function sameResult(r: IrisResult, expected: (tag: number) => IrisResult): void {
  const { pixels, ...fields } = expected(r.tag);
  expect({ ...r, pixels: undefined }).toEqual({ ...fields, pixels: undefined });
  // Buffer.compare: toEqual walks 76,800 elements for seconds.
  expect(r.pixels).toBeInstanceOf(Uint8Array);
  expect(Buffer.compare(r.pixels, pixels)).toBe(0);
}

/** A copy of `report` with byte `at` inverted. */
function flipped(report: Buffer, at: number): Buffer {
  const b = Buffer.from(report);
  b[at]! ^= 0xff;
  return b;
}

describe('iris HID driver reassembling a result the test sends chunk by chunk', () => {
  const cropped = { kind: 3, width: 320, height: 240 } as const;

  function driverOn(camera: HandFedCamera, retries: number): IrisHidDriver {
    const d = new IrisHidDriver(camera, { timeoutMs: 300, retries });
    cleanup.push(async () => d.detach());
    return d;
  }

  it('returns the result byte for byte, the last chunk padded, short reports of other captures skipped', async () => {
    const camera = new HandFedCamera((tag) => [
      // Left over from an abandoned transfer: a chunk in the middle, and a short first chunk of another tag.
      ...resultBodies(handFedResult((tag + 1) & 0xff)).slice(5, 7),
      resultBodies(handFedResult((tag + 1) & 0xff))[0]!.subarray(0, 12),
      ...resultBodies(handFedResult(tag, tag)),
    ]);
    const d = driverOn(camera, 0);
    for (let i = 0; i < 3; i++) sameResult(await d.capture(cropped), (tag) => handFedResult(tag, tag));
    expect(d.resends).toBe(0);
    expect(camera.commands).toEqual(['StartCapture', 'StartCapture', 'StartCapture']);
  });

  it('refuses chunks out of order with DRIVER_SEQUENCE naming both, then stops the camera', async () => {
    const camera = new HandFedCamera((tag) => {
      const reports = resultBodies(handFedResult(tag));
      [reports[3], reports[4]] = [reports[4]!, reports[3]!];
      return reports;
    });
    const d = driverOn(camera, 0);
    await expect(d.capture(cropped)).rejects.toMatchObject({
      code: 'DRIVER_SEQUENCE',
      message: 'iris result chunk 4 came where 3 was due',
      retryable: true,
      context: { family: 'iris-hid', expected: 3, got: 4 },
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(camera.commands).toEqual(['StartCapture', 'StopCapture']);
  });

  it('refuses a result with one byte changed with DRIVER_CHECKSUM, and one cut short the same way', async () => {
    for (const damage of [(b: Buffer) => flipped(b, 30), (b: Buffer) => b.subarray(0, 20)]) {
      const camera = new HandFedCamera((tag) => {
        const reports = resultBodies(handFedResult(tag));
        reports[700] = damage(reports[700]!);
        return reports;
      });
      const err = (await driverOn(camera, 0)
        .capture(cropped)
        .catch((e: unknown) => e)) as AgentError;
      expect(err).toMatchObject({ code: 'DRIVER_CHECKSUM', retryable: true });
      expect(err.message).toMatch(/^iris result with a bad CRC-32 \(expected 0x[0-9a-f]+, got 0x[0-9a-f]+\)$/);
      await new Promise((r) => setTimeout(r, 20));
      expect(camera.commands).toEqual(['StartCapture', 'StopCapture']);
    }
  });

  it('asks again after a gap and a bad CRC-32, and keeps the good copy byte for byte', async () => {
    const camera = new HandFedCamera((tag, copy) => {
      const reports = resultBodies(handFedResult(tag, 9));
      if (copy === 0) reports.splice(600, 1); // a lost report
      if (copy === 1) reports[1000] = flipped(reports[1000]!, 10); // a damaged one
      return reports;
    });
    const d = driverOn(camera, 2);
    sameResult(await d.capture(cropped), (tag) => handFedResult(tag, 9));
    expect(d.resends).toBe(2);
    expect(camera.commands).toEqual(['StartCapture', 'ResendResult', 'ResendResult']);
  });
});
