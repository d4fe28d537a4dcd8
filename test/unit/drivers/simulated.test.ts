import { describe, expect, it } from 'vitest';
import { createSimulatedScanner, SIMULATED_FAMILIES } from '../../../drivers/simulated.js';
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
