/**
 * Zhang–Suen thinning of a binary image to a one-pixel-wide 8-connected skeleton, in place.
 * Only pixels that were removable in the previous pass are re-examined, so it is fast on
 * fingerprints (a few passes over candidate lists).
 *
 * Tested in test/unit/biometrics/extract/finger-pipeline.test.ts (the skeleton the minutiae are
 * read from: ground-truth minutiae found).
 */
export function thin(bin: Uint8Array, width: number, height: number): Uint8Array {
  const img = bin;
  // Clear the border so neighbourhoods never leave the image.
  for (let x = 0; x < width; x++) {
    img[x] = 0;
    img[(height - 1) * width + x] = 0;
  }
  for (let y = 0; y < height; y++) {
    img[y * width] = 0;
    img[y * width + width - 1] = 0;
  }
  let candidates: number[] = [];
  for (let i = 0; i < img.length; i++) if (img[i]) candidates.push(i);
  const W = width;
  const del: number[] = [];
  for (let iter = 0; iter < 100; iter++) {
    let changed = false;
    for (let step = 0; step < 2; step++) {
      del.length = 0;
      for (const i of candidates) {
        if (!img[i]) continue;
        const p2 = img[i - W]!,
          p3 = img[i - W + 1]!,
          p4 = img[i + 1]!,
          p5 = img[i + W + 1]!;
        const p6 = img[i + W]!,
          p7 = img[i + W - 1]!,
          p8 = img[i - 1]!,
          p9 = img[i - W - 1]!;
        const b = p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9;
        if (b < 2 || b > 6) continue;
        const a = +(!p2 && p3) + +(!p3 && p4) + +(!p4 && p5) + +(!p5 && p6) + +(!p6 && p7) + +(!p7 && p8) + +(!p8 && p9) + +(!p9 && p2);
        if (a !== 1) continue;
        if (step === 0 ? p2 * p4 * p6 === 0 && p4 * p6 * p8 === 0 : p2 * p4 * p8 === 0 && p2 * p6 * p8 === 0) del.push(i);
      }
      for (const i of del) img[i] = 0;
      if (del.length) changed = true;
    }
    if (!changed) break;
    candidates = candidates.filter((i) => img[i] === 1);
  }
  // Remove staircase pixels (a corner pixel whose two 4-neighbours already connect its ends).
  for (let i = W + 1; i < img.length - W - 1; i++) {
    if (!img[i]) continue;
    const n = img[i - W]!,
      e = img[i + 1]!,
      s = img[i + W]!,
      w = img[i - 1]!;
    if (
      (n && e && !s && !w && !img[i + W - 1]) ||
      (e && s && !n && !w && !img[i - W - 1]) ||
      (s && w && !n && !e && !img[i - W + 1]) ||
      (w && n && !s && !e && !img[i + W + 1])
    ) {
      img[i] = 0; // its two 4-neighbours stay 8-connected through the diagonal
    }
  }
  return img;
}
