import { afterEach, describe, expect, it } from 'vitest';
import { IrisHidScanner, IR_CAPTURE_LEVEL } from '../../../../drivers/iris-hid/scanner.js';
import { IrisHidSimulator } from '../../../../drivers/iris-hid/simulator.js';
import { HidTransport } from '../../../../drivers/transport/hid-transport.js';
import type { ScannerInfo } from '../../../../drivers/scanner.js';
import { testEye } from './eye.fixture.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function setup(options: { reconnect?: boolean } = {}) {
  const simulator = new IrisHidSimulator({ images: testEye, pace: false, serial: 'IRS42' });
  const transport = new HidTransport({ path: 'sim:iris-scanner', open: simulator.opener });
  const scanner = new IrisHidScanner({
    transport,
    timeoutMs: 300,
    captureTimeoutMs: 200,
    pollMs: 5,
    reconnect: options.reconnect ? { baseMs: 10, capMs: 20 } : false,
  });
  cleanup.push(async () => {
    await scanner.close();
    await simulator.close();
  });
  return { simulator, scanner, transport };
}

describe('IrisHidScanner', () => {
  it('opens and describes the camera', async () => {
    const { scanner } = await setup();
    expect(await scanner.open()).toEqual({
      family: 'iris-hid',
      modality: 'iris',
      model: 'SIM-IRIS-1',
      firmware: '1.0.0',
      serial: 'IRS42',
      transport: 'hid',
      path: 'sim:iris-scanner',
      baud: null,
      capacity: null,
      templates: null,
      image: { width: 640, height: 480, bitsPerPixel: 8 },
      // Pixels across the iris (ISO/IEC 19794-6), with the ppi the camera reports.
      resolution: { kind: 'iris', irisDiameterPx: 200, ppi: 460 },
    });
    expect(scanner.capabilities).toEqual({ image: true, moduleSearch: false, moduleEnroll: false, feedback: true });
  });

  it('waits for an eye and captures with the IR on only during the capture', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    expect(await scanner.waitForPresence({ timeoutMs: 20 })).toBe(false);
    setTimeout(() => simulator.present(8), 15);
    expect(await scanner.waitForPresence({ timeoutMs: 1000 })).toBe(true);
    const img = await scanner.captureImage();
    expect(img).toMatchObject({ width: 640, height: 480, sourceBitsPerPixel: 8, dpi: 460 });
    expect(img.irisDiameterPx).toBeGreaterThan(100);
    expect(img.quality).toBeGreaterThanOrEqual(80);
    expect(simulator.received).toContain('SetLights');
    expect(simulator.lastCaptureIr).toBe(IR_CAPTURE_LEVEL);
    expect(simulator.lights.ir).toBe(0);
  });

  it('fails a capture with no eye by its name and leaves the IR off', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    await expect(scanner.captureImage()).rejects.toMatchObject({ code: 'DRIVER_IRIS_NO_EYE' });
    expect(simulator.lights.ir).toBe(0);
  });

  it('shows feedback on the indicator LED and refuses module operations plainly', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    await scanner.feedback('accepted');
    expect(simulator.lights).toEqual({ ir: 0, color: 1, blink: 0 });
    await scanner.feedback('unknown');
    expect(simulator.lights).toEqual({ ir: 0, color: 2, blink: 1 });
    await scanner.feedback('idle');
    expect(simulator.lights.color).toBe(0);
    await expect(scanner.searchOnModule()).rejects.toMatchObject({ code: 'DRIVER_UNSUPPORTED' });
    await expect(scanner.enrollOnModule()).rejects.toMatchObject({ code: 'DRIVER_UNSUPPORTED' });
    await expect(scanner.storeOnModule()).rejects.toMatchObject({ code: 'DRIVER_UNSUPPORTED' });
    expect(await scanner.usedSlots()).toEqual([]);
    await scanner.clearModule();
  });

  it('emits disconnect on unplug, reopens with backoff when plugged back and emits reconnect', async () => {
    const { scanner, simulator } = await setup({ reconnect: true });
    await scanner.open();
    const gone = new Promise<Error>((r) => scanner.once('disconnect', r));
    const back = new Promise<ScannerInfo>((r) => scanner.once('reconnect', r));
    simulator.unplug();
    expect(((await gone) as { code?: string }).code).toBe('TRANSPORT_DISCONNECTED');
    await new Promise((r) => setTimeout(r, 50));
    simulator.replug();
    expect((await back).serial).toBe('IRS42');
    simulator.present(3);
    expect((await scanner.captureImage()).pixels.length).toBe(640 * 480);
  });
});
