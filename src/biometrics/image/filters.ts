/**
 * Small float-image filters shared by the renderers and the pipelines (row-major Float32Array).
 */

/** Box blur of radius r (window 2r+1), edges clamped; separable, O(1) per pixel. */
export function boxBlur(src: Float32Array, width: number, height: number, r: number): Float32Array {
  if (r <= 0) return src.slice();
  return boxBlurInto(src, width, height, r, new Float32Array(src.length), new Float32Array(src.length));
}

/**
 * boxBlur (r > 0) into `out`, by way of `tmp` (both as long as `src`, neither `src`): a caller
 * blurring several times reuses its buffers.
 */
function boxBlurInto(src: Float32Array, width: number, height: number, r: number, tmp: Float32Array, out: Float32Array): Float32Array {
  const win = 2 * r + 1;
  // Along each row, the window's ends clamped only where they can leave the row: the first r
  // pixels (left end) and from width − r − 1 on (right end); between, neither is. The same sums in
  // the same order.
  const lo = Math.min(width, r),
    hi = Math.max(lo, width - r - 1);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let acc = 0;
    for (let k = -r; k <= r; k++) acc += src[row + Math.min(width - 1, Math.max(0, k))]!;
    for (let x = 0; x < lo; x++) {
      tmp[row + x] = acc / win;
      acc += src[row + Math.min(width - 1, x + r + 1)]! - src[row]!;
    }
    for (let x = lo; x < hi; x++) {
      tmp[row + x] = acc / win;
      acc += src[row + x + r + 1]! - src[row + x - r]!;
    }
    for (let x = hi; x < width; x++) {
      tmp[row + x] = acc / win;
      acc += src[row + width - 1]! - src[row + Math.max(0, x - r)]!;
    }
  }
  // Columns a row at a time (one running sum per column, in the same order as one column at a
  // time, so the same sums): the image is read along its rows, not across them.
  const acc = new Float64Array(width);
  for (let k = -r; k <= r; k++) {
    const row = Math.min(height - 1, Math.max(0, k)) * width;
    for (let x = 0; x < width; x++) acc[x]! += tmp[row + x]!;
  }
  for (let y = 0; y < height; y++) {
    const row = y * width,
      add = Math.min(height - 1, y + r + 1) * width,
      sub = Math.max(0, y - r) * width;
    for (let x = 0; x < width; x++) {
      out[row + x] = acc[x]! / win;
      acc[x]! += tmp[add + x]! - tmp[sub + x]!;
    }
  }
  return out;
}

/**
 * The radius of the three box blurs gaussianBlur makes for sigma (0: none): two sigmas with the
 * same radius blur alike.
 */
export function gaussianBoxRadius(sigma: number): number {
  if (sigma <= 0.3) return 0;
  // Three boxes of radius r have variance 3·((2r+1)²−1)/12 = r(r+1).
  return Math.max(1, Math.round((Math.sqrt(1 + 4 * sigma * sigma) - 1) / 2));
}

/** Approximate Gaussian blur of standard deviation sigma by three box blurs. */
export function gaussianBlur(src: Float32Array, width: number, height: number, sigma: number): Float32Array {
  const r = gaussianBoxRadius(sigma);
  if (!r) return src.slice();
  // Three buffers for the three passes: the third writes over the first's result, read by then.
  const tmp = new Float32Array(src.length),
    a = new Float32Array(src.length),
    b = new Float32Array(src.length);
  boxBlurInto(src, width, height, r, tmp, a);
  boxBlurInto(a, width, height, r, tmp, b);
  return boxBlurInto(b, width, height, r, tmp, a);
}

/** Sobel gradients of a float image (0 on its border), their magnitude and its largest value. */
export interface Sobel {
  gx: Float32Array;
  gy: Float32Array;
  mag: Float32Array;
  max: number;
  w: number;
  h: number;
}

export function sobel(f: Float32Array, w: number, h: number): Sobel {
  const gx = new Float32Array(w * h),
    gy = new Float32Array(w * h),
    mag = new Float32Array(w * h);
  let max = 0;
  for (let y = 1; y < h - 1; y++)
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      const X = f[i - w + 1]! + 2 * f[i + 1]! + f[i + w + 1]! - f[i - w - 1]! - 2 * f[i - 1]! - f[i + w - 1]!;
      const Y = f[i + w - 1]! + 2 * f[i + w]! + f[i + w + 1]! - f[i - w - 1]! - 2 * f[i - w]! - f[i - w + 1]!;
      gx[i] = X;
      gy[i] = Y;
      const m = Math.sqrt(X * X + Y * Y);
      mag[i] = m;
      if (m > max) max = m;
    }
  return { gx, gy, mag, max, w, h };
}

/** Bilinear sample of a float image, clamped at the edges. */
export function sampleBilinear(src: Float32Array, width: number, height: number, x: number, y: number): number {
  const fx = Math.min(width - 1, Math.max(0, x)),
    fy = Math.min(height - 1, Math.max(0, y));
  return sampleInside(src, width, height, fx, fy);
}

/**
 * sampleBilinear of a point the caller knows to be inside the image (0 ≤ x ≤ width − 1,
 * 0 ≤ y ≤ height − 1), where clamping changes nothing: the same value without it.
 */
export function sampleInside(src: Float32Array, width: number, height: number, x: number, y: number): number {
  const x0 = Math.floor(x),
    y0 = Math.floor(y);
  const x1 = x0 + 1 < width ? x0 + 1 : width - 1,
    y1 = y0 + 1 < height ? y0 + 1 : height - 1;
  const tx = x - x0,
    ty = y - y0;
  const a = src[y0 * width + x0]! * (1 - tx) + src[y0 * width + x1]! * tx;
  const b = src[y1 * width + x0]! * (1 - tx) + src[y1 * width + x1]! * tx;
  return a * (1 - ty) + b * ty;
}
