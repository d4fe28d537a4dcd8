/**
 * `npm run bench:extract -- [--json] [--fingers N] [--eyes N]`
 *
 * Image → template through the real pipelines (ONNX sessions created once, then reused), on
 * synthetic images with ground truth:
 * - finger: single-image extraction latency p50/p95 (rendering excluded), minutiae recall and
 *   precision against the ground truth (a match is within 10 px and 30°, one-to-one; ground
 *   truth counted where the sensor sees at least 14 px of finger all round), and FNMR at FMR 1e-3
 *   through the whole image path (two impressions per finger compared with the finger matcher;
 *   impostors: every impression against every other finger's).
 * - iris: latency p50/p95 once warm, the first five (other) eyes' latency apart as `coldStartMs`
 *   (what the first captures after a start cost), genuine and impostor Hamming distances, FNMR at
 *   FMR 1e-3.
 * Prints one JSON object with the figures, the floors they are held to, and the machine load;
 * CPU time per image (all threads of the process) is given beside the wall-clock latency because
 * the latter grows with the load of the shared machine.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { extractFinger } from '../../src/biometrics/extract/finger-pipeline.js';
import { extractIris } from '../../src/biometrics/extract/iris-pipeline.js';
import { compareFingerTemplates } from '../../src/biometrics/finger/matcher.js';
import type { FingerTemplate, Minutia } from '../../src/biometrics/finger/template.js';
import { compareIrisCodes } from '../../src/biometrics/iris/iris-match.js';
import type { IrisCode } from '../../src/biometrics/iris/iris-code.js';
import { syntheticFingerImage, type SyntheticFingerImage } from '../../src/synthetic/finger-image.js';
import { renderEye } from '../../src/synthetic/eye-image.js';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, fingers: { type: 'string' }, eyes: { type: 'string' } } });
const FINGERS = Number(values.fingers ?? 30);
const EYES = Number(values.eyes ?? 12);
/** Eyes extracted before the measured ones (see irisBench). */
const IRIS_WARM_UP = 5;
const FLOORS = { fingerRecall: 0.8, fingerPrecision: 0.8, fingerP95Ms: 250, irisP95Ms: 150, fnmrAtFmr1e3: 0.1 };

/** CPU time of this process (all threads) in ms: load-independent, unlike wall-clock latency. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Ground-truth minutiae the sensor sees with at least `m` px of finger all round. */
function visibleTruth(im: SyntheticFingerImage, m = 14): Minutia[] {
  return im.minutiae.filter((g) => {
    const x = Math.round(g.x),
      y = Math.round(g.y);
    if (x < m || y < m || x >= im.width - m || y >= im.height - m) return false;
    for (let yy = y - m; yy <= y + m; yy++) for (let xx = x - m; xx <= x + m; xx++) if (!im.contact[yy * im.width + xx]) return false;
    return true;
  });
}

function matchCount(truth: Minutia[], found: Minutia[]): number {
  const used = new Uint8Array(found.length);
  let n = 0;
  for (const g of truth) {
    let best = -1,
      bd = Infinity;
    for (let j = 0; j < found.length; j++) {
      if (used[j]) continue;
      const m = found[j]!;
      const d = Math.hypot(m.x - g.x, m.y - g.y);
      const da = Math.abs(Math.atan2(Math.sin(m.angle - g.angle), Math.cos(m.angle - g.angle)));
      if (d <= 10 && da <= Math.PI / 6 && d < bd) {
        bd = d;
        best = j;
      }
    }
    if (best >= 0) {
      used[best] = 1;
      n++;
    }
  }
  return n;
}

/** FNMR at the lowest threshold whose FMR is at most `fmr` (scores: higher = more similar). */
function fnmrAt(genuine: number[], impostor: number[], fmr: number): { fnmr: number; threshold: number } {
  const imp = [...impostor].sort((a, b) => b - a);
  const allowed = Math.floor(fmr * imp.length);
  // Threshold just above the (allowed+1)-th highest impostor score.
  const threshold = imp.length > allowed ? imp[allowed]! + 1e-9 : -Infinity;
  return { fnmr: genuine.filter((g) => g < threshold).length / genuine.length, threshold };
}

async function fingerBench() {
  const lat: number[] = [],
    cpu: number[] = [];
  let tp = 0,
    truthN = 0,
    foundN = 0;
  const templates: FingerTemplate[][] = [];
  // Warm-up: the first run creates the session and JIT-compiles.
  await extractFinger(syntheticFingerImage(9999, 1));
  for (let f = 1; f <= FINGERS; f++) {
    const row: FingerTemplate[] = [];
    for (let i = 1; i <= 2; i++) {
      const im = syntheticFingerImage(f, i);
      const c0 = cpuMs();
      const t0 = performance.now();
      const { template } = await extractFinger(im);
      lat.push(performance.now() - t0);
      cpu.push(cpuMs() - c0);
      const truth = visibleTruth(im);
      tp += matchCount(truth, template.minutiae);
      truthN += truth.length;
      foundN += template.minutiae.length;
      row.push(template);
    }
    templates.push(row);
  }
  const genuine: number[] = [],
    impostor: number[] = [];
  for (let a = 0; a < FINGERS; a++) {
    genuine.push(compareFingerTemplates(templates[a]![0]!, templates[a]![1]!));
    for (let b = a + 1; b < FINGERS; b++)
      for (const i of [0, 1]) for (const j of [0, 1]) impostor.push(compareFingerTemplates(templates[a]![i]!, templates[b]![j]!));
  }
  lat.sort((a, b) => a - b);
  const at = fnmrAt(genuine, impostor, 1e-3);
  return {
    images: lat.length,
    size: '256x288@500dpi',
    p50Ms: r3(pct(lat, 0.5)),
    p95Ms: r3(pct(lat, 0.95)),
    cpuP50Ms: r3(
      pct(
        cpu.sort((a, b) => a - b),
        0.5,
      ),
    ),
    cpuP95Ms: r3(pct(cpu, 0.95)),
    recall: r3(tp / truthN),
    precision: r3(tp / foundN),
    fnmrAtFmr1e3: r3(at.fnmr),
    thresholdAtFmr1e3: r3(at.threshold),
    fnmrAtScore30: r3(genuine.filter((g) => g < 30).length / genuine.length),
    genuinePairs: genuine.length,
    impostorPairs: impostor.length,
    meanMinutiae: r3(foundN / lat.length),
  };
}

async function irisBench() {
  const lat: number[] = [],
    cpu: number[] = [];
  const codes: Array<Array<IrisCode | undefined>> = [];
  const refusals: Record<string, number> = {};
  // Warm-up: the first eyes after a start pay for compiling the code (on synthetic 640×480 eyes
  // the first five took 1,404, 662, 651, 432 and 191 ms against ~100 ms after). They are other
  // eyes than the measured ones, timed and reported apart as what a terminal's first captures
  // after a start cost; the p50/p95 are the steady state every later capture sees.
  const cold: number[] = [];
  for (let w = 0; w < IRIS_WARM_UP; w++) {
    const t0 = performance.now();
    await extractIris(renderEye(9990 + w, 1)).catch(() => undefined);
    cold.push(r3(performance.now() - t0));
  }
  for (let e = 1; e <= EYES; e++) {
    const row: Array<IrisCode | undefined> = [];
    for (let s = 1; s <= 2; s++) {
      const im = renderEye(e, s);
      const c0 = cpuMs();
      const t0 = performance.now();
      try {
        const { code } = await extractIris(im);
        row.push(code);
      } catch (err) {
        // A usable synthetic eye refused: a failure to acquire, counted, never hidden.
        const reason = String((err as { context?: { reason?: string } }).context?.reason ?? (err as Error).message);
        refusals[reason] = (refusals[reason] ?? 0) + 1;
        row.push(undefined);
      }
      lat.push(performance.now() - t0);
      cpu.push(cpuMs() - c0);
    }
    codes.push(row);
  }
  const genuine: number[] = [],
    impostor: number[] = [];
  for (let a = 0; a < EYES; a++) {
    const [a0, a1] = codes[a]!;
    // A refused sample is a genuine miss (it would not identify the person).
    genuine.push(a0 && a1 ? -compareIrisCodes(a0, a1).hd : -1);
    for (let b = a + 1; b < EYES; b++)
      for (const i of [0, 1])
        for (const j of [0, 1]) {
          const x = codes[a]![i],
            y = codes[b]![j];
          if (x && y) impostor.push(-compareIrisCodes(x, y).hd);
        }
  }
  lat.sort((a, b) => a - b);
  const at = fnmrAt(genuine, impostor, 1e-3);
  const mean = (v: number[]) => -v.reduce((s, x) => s + x, 0) / v.length;
  const scored = genuine.filter((g) => g > -1);
  return {
    images: lat.length,
    size: '640x480',
    coldStartMs: cold,
    p50Ms: r3(pct(lat, 0.5)),
    p95Ms: r3(pct(lat, 0.95)),
    cpuP50Ms: r3(
      pct(
        cpu.sort((a, b) => a - b),
        0.5,
      ),
    ),
    cpuP95Ms: r3(pct(cpu, 0.95)),
    failureToAcquire: r3(Object.values(refusals).reduce((a, b) => a + b, 0) / lat.length),
    refusals,
    meanGenuineHd: r3(mean(scored)),
    meanImpostorHd: r3(mean(impostor)),
    maxGenuineHd: r3(-Math.min(...scored)),
    minImpostorHd: r3(-Math.max(...impostor)),
    fnmrAtFmr1e3: r3(at.fnmr),
    genuinePairs: genuine.length,
    impostorPairs: impostor.length,
  };
}

const finger = await fingerBench();
const iris = await irisBench();
const out = {
  finger,
  iris,
  floors: FLOORS,
  ratios: {
    fingerRecall: r3(finger.recall / FLOORS.fingerRecall),
    fingerPrecision: r3(finger.precision / FLOORS.fingerPrecision),
    fingerP95: r3(finger.p95Ms / FLOORS.fingerP95Ms),
    irisP95: r3(iris.p95Ms / FLOORS.irisP95Ms),
    fingerFnmr: r3(finger.fnmrAtFmr1e3 / FLOORS.fnmrAtFmr1e3),
  },
  loadavg: loadavg().map(r3),
  note: 'latency is single-image, sequential, in-process with 1 inference thread, on a machine shared with other work (see loadavg)',
};
if (values.json) process.stdout.write(`${JSON.stringify(out)}\n`);
else process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
