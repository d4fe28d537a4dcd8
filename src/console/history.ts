/**
 * A terminal's metric history for the console's small charts: a fixed ring of time buckets per
 * terminal (720 over `historyHours`, 2 minutes each for 24 hours), one Float32 per series and
 * bucket. Memory is fixed (about 26 KB per terminal for the series below, 26 MB for 1,000
 * terminals) whatever the metrics interval; a bucket keeps the worst value seen in it (the
 * highest, or the lowest for free disk), which is what a small chart should not hide.
 */
import type { FleetRow } from '../ops/fleet-row.js';

export const HISTORY_SERIES = [
  { name: 'queuePending', label: 'Queue (pending punches)', unit: '', worst: 'max' },
  { name: 'oldestPendingAgeSec', label: 'Oldest pending punch', unit: 's', worst: 'max' },
  { name: 'dead', label: 'Dead letters', unit: '', worst: 'max' },
  { name: 'identificationP95Ms', label: 'Identification p95', unit: 'ms', worst: 'max' },
  { name: 'captureP95Ms', label: 'Capture to punch p95', unit: 'ms', worst: 'max' },
  { name: 'cpuTempC', label: 'CPU temperature', unit: '°C', worst: 'max' },
  { name: 'freeDiskMb', label: 'Free disk', unit: 'MB', worst: 'min' },
  { name: 'rssMb', label: 'Agent memory (RSS)', unit: 'MB', worst: 'max' },
] as const satisfies ReadonlyArray<{ name: keyof FleetRow; label: string; unit: string; worst: 'max' | 'min' }>;

export const HISTORY_POINTS = 720;

export interface HistoryView {
  /** Start of the first bucket, bucket length (ms), one value or null per bucket and series. */
  from: number;
  stepMs: number;
  series: Array<{ name: string; label: string; unit: string; values: Array<number | null> }>;
}

export class MetricHistory {
  readonly stepMs: number;
  readonly #values: Float32Array;
  /** The bucket number (time / stepMs) each slot holds; -1 for none. */
  readonly #bucketOf: Float64Array;

  constructor(historyHours: number) {
    this.stepMs = Math.max(1000, Math.round((historyHours * 3_600_000) / HISTORY_POINTS));
    this.#values = new Float32Array(HISTORY_SERIES.length * HISTORY_POINTS).fill(Number.NaN);
    this.#bucketOf = new Float64Array(HISTORY_POINTS).fill(-1);
  }

  /** Records the figures of a row taken at `at` (ms); figures older than the window are dropped. */
  add(row: FleetRow, at: number, now = Date.now()): void {
    const bucket = Math.floor(at / this.stepMs);
    const nowBucket = Math.floor(now / this.stepMs);
    if (bucket > nowBucket + 1 || bucket <= nowBucket - HISTORY_POINTS) return;
    const slot = bucket % HISTORY_POINTS;
    if (this.#bucketOf[slot] !== bucket) {
      this.#bucketOf[slot] = bucket;
      for (let s = 0; s < HISTORY_SERIES.length; s++) this.#values[s * HISTORY_POINTS + slot] = Number.NaN;
    }
    HISTORY_SERIES.forEach((series, s) => {
      const v = row[series.name];
      if (typeof v !== 'number' || !Number.isFinite(v)) return;
      const i = s * HISTORY_POINTS + slot;
      const old = this.#values[i]!;
      this.#values[i] = Number.isNaN(old) ? v : series.worst === 'max' ? Math.max(old, v) : Math.min(old, v);
    });
  }

  view(now = Date.now()): HistoryView {
    const last = Math.floor(now / this.stepMs);
    const first = last - HISTORY_POINTS + 1;
    return {
      from: first * this.stepMs,
      stepMs: this.stepMs,
      series: HISTORY_SERIES.map((series, s) => {
        const values: Array<number | null> = [];
        for (let b = first; b <= last; b++) {
          const slot = b % HISTORY_POINTS;
          const v = this.#bucketOf[slot] === b ? this.#values[s * HISTORY_POINTS + slot]! : Number.NaN;
          values.push(Number.isNaN(v) ? null : Math.round(v * 100) / 100);
        }
        return { name: series.name, label: series.label, unit: series.unit, values };
      }),
    };
  }
}
