import { describe, expect, it } from 'vitest';
import { attachSimulator, createSimulatedScanner, SIMULATED_FAMILIES } from '../../../drivers/simulated.js';
import { fallbackImages } from '../../../drivers/simulator/images.js';
import { createMemoryPair } from '../../../drivers/transport/memory-transport.js';
import { syntheticImages } from '../../../src/synthetic/simulator-sources.js';

describe('simulated GT-521 scanner', () => {
  it('is wired in-process with the synthetic finger images, and takes fault switches by name', async () => {
    expect(SIMULATED_FAMILIES).toContain('gt521');
    const { scanner, simulator } = await createSimulatedScanner('gt521', {
      images: syntheticImages,
      scanner: { pollMs: 5, timeoutMs: 150, retries: 0, reconnect: false },
    });
    try {
      const info = await scanner.open();
      expect(info).toMatchObject({ family: 'gt521', model: 'GT-521F52', baud: 9600 });
      simulator.enroll(3, 1234);
      simulator.present(1234);
      expect(await scanner.searchOnModule()).toEqual({ slot: 3, score: 100 });
      const img = await scanner.captureImage();
      expect(img.pixels.length).toBe(258 * 202);
      expect(new Set(img.pixels).size).toBeGreaterThan(16);
      simulator.setFault('no-finger', true);
      expect(await scanner.waitForPresence({ timeoutMs: 20 })).toBe(false);
      simulator.setFault('no-finger', false);
      simulator.setFault('stall', true);
      await expect(scanner.info()).rejects.toMatchObject({ code: 'DRIVER_TIMEOUT' });
      expect(() => simulator.setFault('smoke', true)).toThrow(/unknown GT-521 simulator fault/);
      simulator.setFault('stall', false);
    } finally {
      await scanner.close();
      await simulator.close();
    }
  });
});

describe('simulated iris camera', () => {
  it('runs in-process on the HID seam with the synthetic eye images', async () => {
    expect(SIMULATED_FAMILIES).toContain('iris-hid');
    const { scanner, simulator } = await createSimulatedScanner('iris-hid', {
      images: syntheticImages,
      scanner: { captureTimeoutMs: 300, reconnect: false },
    });
    try {
      expect(await scanner.open()).toMatchObject({ family: 'iris-hid', transport: 'hid', path: 'sim:iris-hid' });
      simulator.present(11);
      const img = await scanner.captureImage();
      expect(img.pixels.length).toBe(640 * 480);
      expect(new Set(img.pixels).size).toBeGreaterThan(20);
      simulator.setFault('no-eye', true);
      await expect(scanner.captureImage()).rejects.toMatchObject({ code: 'DRIVER_IRIS_NO_EYE' });
    } finally {
      await scanner.close();
      await simulator.close();
    }
  });

  it('says plainly that it is not a byte-stream simulator', async () => {
    const { device } = createMemoryPair();
    await expect(attachSimulator('iris-hid', device, { images: fallbackImages })).rejects.toMatchObject({
      code: 'DRIVER_UNKNOWN_FAMILY',
      hint: expect.stringMatching(/in-process|createSimulatedScanner/),
    });
  });
});
