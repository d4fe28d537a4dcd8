import { afterEach, describe, expect, it } from 'vitest';
import { Gt521Scanner } from '../../../../drivers/gt521/scanner.js';
import { decodeSimTemplate } from '../../../../drivers/gt521/sim-template.js';
import { Gt521Simulator } from '../../../../drivers/gt521/simulator.js';
import type { SimImage } from '../../../../drivers/simulator/images.js';
import { createMemoryPair } from '../../../../drivers/transport/memory-transport.js';

const images = (id: number, impression: number): SimImage => ({
  width: 258,
  height: 202,
  pixels: Uint8Array.from({ length: 258 * 202 }, (_, i) => (i + id * 3 + impression) & 0xff),
});

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function setup() {
  const pair = createMemoryPair('gt521-scanner');
  const simulator = new Gt521Simulator({ images, pace: false, serialNumber: Buffer.from('0123456789abcdef0123456789abcdef', 'hex') });
  await simulator.attach(pair.device);
  const scanner = new Gt521Scanner({ transport: pair.host, timeoutMs: 300, pollMs: 5, blinkMs: 1, pressTimeoutMs: 500, reconnect: false });
  cleanup.push(async () => {
    await scanner.close();
    await simulator.detach();
  });
  return { scanner, simulator };
}

describe('Gt521Scanner', () => {
  it('opens and describes the module', async () => {
    const { scanner, simulator } = await setup();
    simulator.enrollDirect(0, 1);
    const info = await scanner.open();
    expect(info).toMatchObject({
      family: 'gt521',
      modality: 'finger',
      model: 'GT-521F52',
      firmware: '20150930',
      serial: '0123456789ABCDEF-0123456789ABCDEF',
      transport: 'memory',
      capacity: 3000,
      templates: 1,
      image: { width: 258, height: 202, bitsPerPixel: 8 },
    });
    expect(scanner.capabilities).toEqual({ image: true, moduleSearch: true, moduleEnroll: true, moduleEnrollPresses: 3, feedback: true });
    simulator.enrollDirect(1, 2);
    expect((await scanner.info()).templates).toBe(2);
  });

  it('waits for a finger, honours the timeout and the abort signal', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    expect(await scanner.waitForPresence({ timeoutMs: 30 })).toBe(false);
    expect(simulator.led).toBe(true);
    const abort = new AbortController();
    const waiting = scanner.waitForPresence({ timeoutMs: 5000, signal: abort.signal });
    abort.abort();
    expect(await waiting).toBe(false);
    setTimeout(() => simulator.present(9), 20);
    expect(await scanner.waitForPresence({ timeoutMs: 2000 })).toBe(true);
  });

  it('captures an image as the module gives it', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    simulator.present(9);
    const img = await scanner.captureImage();
    expect(img).toMatchObject({ width: 258, height: 202, sourceBitsPerPixel: 8, quality: null });
    expect(img.pixels.length).toBe(258 * 202);
    expect(img.pixels[0]).toBe((9 * 3 + 1) & 0xff);
  });

  it('enrols from three presses with lifts in between, stores, reads, searches and deletes', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    const steps: number[] = [];
    // A person pressing and lifting: on the sensor whenever the module is not between presses.
    // After the third press (step 3) nobody presses again: a late re-press would put finger 31
    // back while the search below expects finger 32.
    simulator.present(31);
    const enrolled = scanner.enrollOnModule({
      onStep: (s) => {
        steps.push(s);
        simulator.lift();
        if (s < 3) setTimeout(() => simulator.present(31), 15);
      },
    });
    const tpl = await enrolled;
    expect(steps).toEqual([1, 2, 3]);
    expect(tpl.format).toBe('gt521');
    expect(decodeSimTemplate(tpl.data)?.fingerId).toBe(31);
    await scanner.storeOnModule(17, tpl);
    expect(await scanner.usedSlots()).toEqual([17]);
    expect((await scanner.readFromModule(17)).data).toEqual(tpl.data);
    simulator.present(31);
    expect(await scanner.searchOnModule()).toEqual({ slot: 17, score: 100 });
    simulator.present(32);
    expect(await scanner.searchOnModule()).toBeNull();
    await scanner.deleteOnModule(17);
    await scanner.deleteOnModule(17);
    expect(await scanner.usedSlots()).toEqual([]);
    await scanner.clearModule();
    await expect(scanner.storeOnModule(1, { format: 'r30x-char', data: new Uint8Array(498) })).rejects.toMatchObject({
      code: 'DRIVER_BAD_TEMPLATE',
    });
    await expect(scanner.enrollOnModule({ presses: 2 })).rejects.toMatchObject({ code: 'DRIVER_BAD_PARAM' });
  });

  it('fails an enrolment press with DRIVER_NO_FINGER when nobody presses', async () => {
    const { scanner } = await setup();
    await scanner.open();
    await expect(scanner.enrollOnModule()).rejects.toMatchObject({ code: 'DRIVER_NO_FINGER', retryable: true });
  });

  it('blinks the sensor light for feedback and leaves it on only when busy', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    await scanner.feedback('busy');
    expect(simulator.led).toBe(true);
    const before = simulator.received.length;
    await scanner.feedback('error');
    expect(simulator.received.slice(before).filter((c) => c === 'CmosLed')).toHaveLength(7);
    expect(simulator.led).toBe(false);
  });

  it('emits disconnect when the module goes away', async () => {
    const { scanner, simulator } = await setup();
    await scanner.open();
    const gone = new Promise<Error>((resolve) => scanner.once('disconnect', resolve));
    await simulator.detach();
    expect(((await gone) as { code?: string }).code).toBe('TRANSPORT_DISCONNECTED');
  });
});
