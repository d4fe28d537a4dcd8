/**
 * What on the rubber-sheet strip is not iris: eyelids, eyelashes, shadows, reflections. Everything
 * is judged relative to this iris's own gray level and texture, measured where eyelids rarely
 * reach (the inner 60 % of the strip below the horizontal and on the sides), so no camera's
 * brightness or contrast is special:
 *
 * - a pixel is foreign when its neighbourhood (5×5) is brighter than the iris by 2.5 of its
 *   spreads (eyelid skin, sclera past a limbus found too wide) or darker by as much (lashes, their
 *   shadow), or the pixel alone by 5 spreads (a reflection);
 * - an eyelid covers the iris from the limbus inwards: in the columns above and below the pupil,
 *   from the first row past which most pixels are foreign to the limbus, with that boundary
 *   smoothed along the lid (the median of ±8 columns, a lid's edge is a smooth curve);
 * - the spreads are at least 3 % of the image's gray range (a flat iris has no spread to speak of).
 *
 * The strip is ρ (row 0 at the pupil, last row at the limbus) × θ (column j at 2πj/cols, y down:
 * the upper lid is where sin θ < 0).
 *
 * Tested in test/unit/biometrics/extract/iris-pipeline.test.ts and
 * test/unit/biometrics/extract/iris-image-kinds.test.ts (eyelids and lashes masked on the strip,
 * through the pipeline).
 */

export interface Occlusion {
  /** 1 = not iris (eyelid, lashes, shadow, reflection, outside the image). */
  mask: Uint8Array;
  /** The iris's own level and spread (median and 1.4826 × MAD over the reference zone). */
  level: number;
  spread: number;
  /** Fraction of the strip that is iris. */
  visible: number;
}

/**
 * `strip` rows × cols; `given` marks pixels already known not to be iris (reflections, outside the
 * image); `range` is the image's 1–99 % gray range.
 */
export function occlusionMask(strip: Float32Array, rows: number, cols: number, given: Uint8Array, range: number): Occlusion {
  // Reference: inner 60 % of the rows, columns below the horizontal or on the sides.
  const ref: number[] = [];
  for (let j = 0; j < cols; j++) {
    const t = (2 * Math.PI * j) / cols;
    if (Math.sin(t) < -0.5) continue;
    for (let i = 0; i < Math.round(0.6 * rows); i++) if (!given[i * cols + j]) ref.push(strip[i * cols + j]!);
  }
  const all: number[] = [];
  if (ref.length < rows * 4) for (let k = 0; k < strip.length; k++) if (!given[k]) all.push(strip[k]!);
  // Sorted as typed arrays (the strip's gray levels are never NaN, so the order is the same).
  const sample = new Float64Array(ref.length >= rows * 4 ? ref : all).sort();
  const level = sample.length ? sample[sample.length >> 1]! : 0;
  const dev = sample.map((v) => Math.abs(v - level)).sort();
  const spread = Math.max(0.03 * range, dev.length ? 1.4826 * dev[dev.length >> 1]! : 0);

  // Neighbourhood means (5×5, circular in θ), over known pixels only.
  const smooth = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) {
      let s = 0,
        n = 0;
      for (let di = -2; di <= 2; di++) {
        const ii = i + di;
        if (ii < 0 || ii >= rows) continue;
        for (let dj = -2; dj <= 2; dj++) {
          // (j + dj) mod cols, by a comparison rather than a division.
          const jj = j + dj < 0 ? j + dj + cols : j + dj >= cols ? j + dj - cols : j + dj;
          const k = ii * cols + jj;
          if (given[k]) continue;
          s += strip[k]!;
          n++;
        }
      }
      smooth[i * cols + j] = n ? s / n : level;
    }
  const foreign = new Uint8Array(rows * cols);
  for (let k = 0; k < foreign.length; k++) {
    if (given[k]) {
      foreign[k] = 1;
      continue;
    }
    const d = (smooth[k]! - level) / spread;
    if (d > 2.5 || d < -2.5 || (strip[k]! - level) / spread > 5) foreign[k] = 1;
  }

  // Eyelids: per column above and below the pupil, the first row past which most pixels are
  // foreign; the boundary smoothed along the lid.
  const lid = new Int32Array(cols).fill(rows);
  for (let j = 0; j < cols; j++) {
    const t = (2 * Math.PI * j) / cols;
    if (Math.abs(Math.sin(t)) < 0.3) continue;
    let bad = 0;
    for (let i = rows - 1; i >= 0; i--) {
      bad += foreign[i * cols + j]!;
      // Rows i..end mostly foreign, and row i itself foreign: the lid reaches down to row i.
      if (foreign[i * cols + j] && bad >= 0.6 * (rows - i)) lid[j] = i;
    }
  }
  const smoothLid = new Int32Array(cols);
  const win: number[] = [];
  for (let j = 0; j < cols; j++) {
    win.length = 0;
    for (let d = -8; d <= 8; d++) win.push(lid[(j + d + cols) % cols]!);
    win.sort((a, b) => a - b);
    smoothLid[j] = win[win.length >> 1]!;
  }
  const mask = foreign.slice();
  for (let j = 0; j < cols; j++) for (let i = smoothLid[j]!; i < rows; i++) mask[i * cols + j] = 1;
  let visible = 0;
  for (const v of mask) visible += v ? 0 : 1;
  return { mask, level, spread, visible: visible / mask.length };
}
