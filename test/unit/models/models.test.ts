// The bundled ONNX models: rebuilt byte for byte from their builders, and what they compute.
//
// Tests: models/build/models.ts and the models in models/, loaded by src/biometrics/extract/onnx-sessions.ts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MODELS } from '../../../models/build/models.js';
import { getSession, ort } from '../../../src/biometrics/extract/onnx-sessions.js';
import { FINGER_GABOR } from '../../../models/build/finger-gabor-bank.js';
import { FINGER_BANK_LAYOUT } from '../../../src/biometrics/extract/finger-pipeline.js';

describe('models/', () => {
  for (const [file, build] of Object.entries(MODELS)) {
    it(`${file} rebuilds byte for byte`, () => {
      const committed = new Uint8Array(readFileSync(new URL(`../../../models/${file}`, import.meta.url)));
      const rebuilt = build();
      expect(rebuilt.length).toBe(committed.length);
      expect(Buffer.compare(Buffer.from(rebuilt), Buffer.from(committed))).toBe(0);
    });
  }

  it('the fingerprint pipeline selects filters in the layout the bank is built with', () => {
    expect(FINGER_BANK_LAYOUT.orientations).toBe(FINGER_GABOR.orientations);
    expect([...FINGER_BANK_LAYOUT.periods]).toEqual([...FINGER_GABOR.periods]);
  });

  it('the Gabor bank enhances a ridge pattern of its own orientation and suppresses the crossing one', async () => {
    const s = await getSession('finger-gabor-bank.onnx');
    const H = 48,
      W = 48,
      K = FINGER_GABOR.orientations * FINGER_GABOR.periods.length;
    // Horizontal ridges (orientation 0), period 10 px.
    const img = new Float32Array(H * W);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) img[y * W + x] = Math.cos((2 * Math.PI * y) / 10);
    const run = async (k: number) => {
      const sel = new Float32Array(K * H * W);
      sel.fill(1, k * H * W, (k + 1) * H * W);
      const out = await s.run({
        image: new ort.Tensor('float32', img, [1, 1, H, W]),
        select: new ort.Tensor('float32', sel, [1, K, H, W]),
      });
      return (out.enhanced!.data as Float32Array)[20 * W + 24]!; // a ridge centre: cos(2π·20/10) = 1;
    };
    const along = await run(FINGER_GABOR.orientations); // period 10, orientation 0
    const across = await run(FINGER_GABOR.orientations + FINGER_GABOR.orientations / 2); // orientation 90°
    expect(along).toBeGreaterThan(0.8);
    expect(Math.abs(across)).toBeLessThan(0.1);
  });
});
