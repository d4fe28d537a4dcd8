/** A ring of the last N latencies with percentiles, for metrics (identification, capture-to-punch, recording a batch's outcomes). */
export class LatencyWindow {
  readonly #values: Float64Array;
  #count = 0;
  #next = 0;

  constructor(size = 256) {
    this.#values = new Float64Array(size);
  }

  add(ms: number): void {
    this.#values[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#values.length;
    if (this.#count < this.#values.length) this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  /** The p-th percentile (0..100, nearest rank) of the window, or null when empty. */
  percentile(p: number): number | null {
    if (this.#count === 0) return null;
    const sorted = Array.from(this.#values.subarray(0, this.#count)).sort((a, b) => a - b);
    const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
    return Math.round(sorted[rank]! * 10) / 10;
  }
}
