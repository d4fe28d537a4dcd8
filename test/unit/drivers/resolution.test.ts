// Every image carries its sensor's resolution from the model, never a guess: a simulated R503
// (which names itself) captures at 508 dpi, an R307 (which does not: model "R30x") at the
// family's 500, a GT-521 at 450, and an iris camera reports its ppi and the iris diameter it
// measured in pixels (what ISO/IEC 19794-6 records).
import { describe, expect, it } from 'vitest';
import { createSimulatedScanner } from '../../../drivers/simulated.js';
import { fallbackImages } from '../../../drivers/simulator/images.js';
import { resolutionOf } from '../../../drivers/resolution.js';
import { R30X_RESOLUTION } from '../../../drivers/r30x/models.js';

describe('resolution of captured images', () => {
  it('comes from the fingerprint module model', async () => {
    for (const [family, model, dpi] of [
      ['r30x', 'R503', 508],
      ['r30x', 'R307', 500],
      ['gt521', 'GT-521F32', 450],
      ['gt521', 'GT-521F52', 450],
    ] as const) {
      const { scanner, simulator } = await createSimulatedScanner(family, {
        images: fallbackImages,
        model,
        scanner: { reconnect: false } as never,
      });
      try {
        const info = await scanner.open();
        expect(info.resolution).toEqual({ kind: 'dpi', dpi });
        simulator.present(3);
        const img = await scanner.captureImage();
        expect([model, img.dpi]).toEqual([model, dpi]);
      } finally {
        await scanner.close();
        await simulator.close();
      }
    }
  }, 60_000);

  it("of an iris capture is the camera's ppi and the iris diameter it measured", async () => {
    const { scanner, simulator } = await createSimulatedScanner('iris-hid', {
      images: fallbackImages,
      scanner: { reconnect: false, captureTimeoutMs: 500 } as never,
    });
    try {
      expect((await scanner.open()).resolution).toEqual({ kind: 'iris', irisDiameterPx: 200, ppi: 460 });
      simulator.present(4);
      const img = await scanner.captureImage();
      expect(img.dpi).toBe(460);
      // The stand-in eye has an iris of radius 100 px in the 640×480 frame.
      expect(img.irisDiameterPx).toBe(200);
    } finally {
      await scanner.close();
      await simulator.close();
    }
  });

  it("falls back to the family's nominal resolution for a model the table does not list", () => {
    expect(resolutionOf(R30X_RESOLUTION, 'R999')).toEqual({ kind: 'dpi', dpi: 500 });
    expect(resolutionOf(R30X_RESOLUTION, null)).toEqual({ kind: 'dpi', dpi: 500 });
  });
});
