import { describe, expect, it } from 'vitest';
import { attachSimulator, createSimulatedScanner, SIMULATED_FAMILIES } from '../../../drivers/simulated.js';
import { createMemoryPair } from '../../../drivers/transport/memory-transport.js';
import { fallbackImages } from '../../../drivers/simulator/images.js';
import { syntheticImages } from '../../../src/synthetic/simulator-sources.js';

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

describe('openScanner for iris-hid', () => {
  it('builds an IrisHidScanner on a HID transport, and a missing camera fails with TRANSPORT_NOT_FOUND', async () => {
    const { createScanner } = await import('../../../drivers/open-scanner.js');
    const scanner = await createScanner({ family: 'iris-hid', path: '/dev/hidraw-does-not-exist' });
    expect(scanner.family).toBe('iris-hid');
    await expect(scanner.open()).rejects.toMatchObject({ code: 'TRANSPORT_NOT_FOUND' });
  });
});
