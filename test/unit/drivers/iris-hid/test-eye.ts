import type { SimEyeImage } from '../../../../drivers/iris-hid/simulator.js';

/** An injected eye source: a disc (iris) with a darker pupil on a bright background, texture keyed by the eye. */
export function testEye(eyeId: number, impression: number): SimEyeImage {
  const width = 640;
  const height = 480;
  const iris = { x: 320 + (impression % 5), y: 240, r: 100 };
  const pupil = { x: iris.x, y: iris.y, r: 35 };
  const pixels = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot(x - iris.x, y - iris.y);
      pixels[y * width + x] = d < pupil.r ? 10 : d < iris.r ? 60 + ((x * eyeId + y) % 90) : 200;
    }
  }
  return { width, height, pixels, truth: { pupil, iris } };
}

