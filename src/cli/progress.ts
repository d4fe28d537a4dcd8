/**
 * Progress of long work for a person at a terminal: one line redrawn in place (at most a few
 * times a second) with a bar, the count, the rate and the time left. No bar when the stream is
 * not a terminal (a pipe, a log file, journald, --json): scripts get only results and lines.
 *
 *   importing  [##########..........]  52%  5,200/10,000  1,840/s  about 3 s left
 */
import { isInteractive } from './screen.js';

export interface Progress {
  /** `done` of `total` (the total may grow or be learnt late). */
  update(done: number, total?: number): void;
  /**
   * A line of its own on `to` (default the progress stream), printed whether or not there is a
   * terminal; on one, above the bar (once there is one), which is drawn again below it.
   */
  say(line: string, to?: NodeJS.WritableStream): void;
  /** Clears the bar; `summary` (if any) stays as a line. */
  finish(summary?: string): void;
}

export interface ProgressOptions {
  total?: number;
  /** Default stderr, so stdout keeps only results. */
  stream?: NodeJS.WriteStream;
  /** The thing counted, for the rate: `punches/s`. */
  unit?: string;
  now?: () => number;
  /** Shortest time between two redraws (default 250 ms). */
  everyMs?: number;
}

const WIDTH = 20;

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function duration(sec: number): string {
  if (!Number.isFinite(sec)) return '?';
  if (sec < 90) return `${Math.max(1, Math.round(sec))} s`;
  if (sec < 5400) return `${Math.round(sec / 60)} min`;
  return `${(sec / 3600).toFixed(1)} h`;
}

/** The line for `done` of `total` after `elapsedMs`. */
export function progressLine(label: string, done: number, total: number | undefined, elapsedMs: number, unit = ''): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const parts = [label];
  if (total && total > 0) {
    const f = Math.min(1, done / total);
    const filled = Math.round(f * WIDTH);
    parts.push(
      `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}]`,
      `${String(Math.floor(f * 100)).padStart(3)}%`,
      `${count(done)}/${count(total)}`,
    );
  } else parts.push(count(done));
  if (rate > 0 && elapsedMs >= 1000) parts.push(`${count(rate)}${unit ? ` ${unit}` : ''}/s`);
  if (total && rate > 0 && done < total && elapsedMs >= 1000) parts.push(`about ${duration((total - done) / rate)} left`);
  return parts.join('  ');
}

/** A progress line on `stream` when it is a terminal; otherwise one that prints nothing but `say`'s lines. */
export function progress(label: string, options: ProgressOptions = {}): Progress {
  const out = options.stream ?? process.stderr;
  if (!isInteractive(out)) return { update: () => undefined, say: (line, to = out) => void to.write(`${line}\n`), finish: () => undefined };
  const now = options.now ?? Date.now;
  const every = options.everyMs ?? 250;
  const start = now();
  let total = options.total;
  let done = 0;
  let drawnAt = -Infinity;
  let shown = false;
  let finished = false;
  let started = false;
  const draw = () => {
    if (finished || !started) return;
    drawnAt = now();
    out.write(`\r\x1b[2K${progressLine(label, done, total, drawnAt - start, options.unit)}`);
    shown = true;
  };
  const clear = () => {
    if (shown) out.write('\r\x1b[2K');
    shown = false;
  };
  return {
    update(n, t) {
      if (finished) return;
      started = true;
      done = n;
      if (t !== undefined) total = t;
      if (now() - drawnAt >= every || (total !== undefined && n >= total)) draw();
    },
    say(line, to = out) {
      clear();
      to.write(`${line}\n`);
      draw();
    },
    finish(summary) {
      clear();
      if (summary && !finished) out.write(`${summary}\n`);
      finished = true;
    },
  };
}
