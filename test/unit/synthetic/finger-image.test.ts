import { describe, expect, it } from 'vitest';
import { fingerImageTruth, renderFingerImage, syntheticFingerImage } from '../../../src/synthetic/finger-image.js';
import { syntheticImages } from '../../../src/synthetic/simulator-sources.js';
import { fallbackFingerImage } from '../../../drivers/simulator/images.js';

describe('synthetic finger image', () => {
  it('renders the R30x sensor size by default, reproducibly, with dark ridges at the truth', () => {
    const a = renderFingerImage(3, 1);
    expect([a.width, a.height, a.pixels.length]).toEqual([256, 288, 256 * 288]);
    expect(renderFingerImage(3, 1).pixels).toEqual(a.pixels);
    expect(renderFingerImage(3, 2).pixels).not.toEqual(a.pixels);
    const full = syntheticFingerImage(3, 1);
    // Ridges (cos ψ > 0 at the master point) are darker on average than valleys inside the contact area.
    let ridge = 0,
      nr = 0,
      valley = 0,
      nv = 0;
    for (let y = 0; y < a.height; y += 2)
      for (let x = 0; x < a.width; x += 2) {
        const i = y * a.width + x;
        if (!full.contact[i]) continue;
        const [mx, my] = full.impression.toMaster(x, y);
        const c = Math.cos(full.finger.phase(mx, my));
        if (c > 0.7) {
          ridge += a.pixels[i]!;
          nr++;
        } else if (c < -0.7) {
          valley += a.pixels[i]!;
          nv++;
        }
      }
    expect(valley / nv - ridge / nr).toBeGreaterThan(60);
    const truth = fingerImageTruth(3, 1);
    expect(truth.length).toBeGreaterThan(15);
    for (const m of truth) expect(full.contact[Math.round(m.y) * 256 + Math.round(m.x)]).toBe(1);
  });

  it('other sensor sizes (GT-521 258×202) and the simulators pick the renderer up', async () => {
    const g = renderFingerImage(3, 1, { width: 258, height: 202 });
    expect([g.width, g.height]).toEqual([258, 202]);
    const source = syntheticImages.finger;
    expect(source).not.toBe(fallbackFingerImage);
    expect(source(3, 1).pixels).toEqual(renderFingerImage(3, 1).pixels);
  });
});
