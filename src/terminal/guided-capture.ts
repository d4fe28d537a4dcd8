/**
 * A person in front of a scanner, as enrolment (enroller.ts) and on-demand identification
 * (identify-on-demand.ts) guide them: which scanner (`workerFor`), one capture turned into a
 * template (`captureTemplate`), waiting for the finger to lift or the eye to go (`waitForLift`),
 * the words they are told (`promptWords`) and the steps reported as they happen (`Progress`).
 *
 * Tested in test/unit/terminal/scanner-worker.test.ts (the scanner lent to enrolment, refused when
 * not connected) and test/integration/enroll-guided.test.ts (the prompts and the lift between
 * presses).
 */
import type { CapturedImage, Scanner } from '../../drivers/scanner.js';
import { AgentError } from '../core/errors.js';
import type { BiometricModality, ScannerModality } from '../core/modality.js';
import { monotonicMs } from '../core/time.js';
import type { TemplateFormat } from '../store/template-cache.js';
import { badgeReaders } from './badge-enroller.js';
import type { Extractor } from './engines.js';
import type { ScannerWorker } from './scanner-worker.js';

/** What the person (or the command showing it) is told at each step, as it happens. */
export type Progress = (event: Record<string, unknown>) => void;

/** The worker of the first scanner of a modality that is ready (or the first of that modality). */
export function workerFor(
  rt: { readonly workers: ReadonlyMap<string, ScannerWorker> },
  modality: ScannerModality,
  key?: string,
): ScannerWorker {
  const workers = [...rt.workers.values()];
  const chosen = key
    ? rt.workers.get(key)
    : (workers.find((w) => w.modality === modality && w.status === 'ready') ?? workers.find((w) => w.modality === modality));
  if (!chosen) {
    throw new AgentError(
      'AGENT_NO_SCANNER',
      key ? `no scanner "${key}" on this terminal` : `no ${modality} scanner on this terminal`,
      { modality, key: key ?? null },
      {
        hint: `scanners here: ${workers.map((w) => w.key).join(', ') || 'none'}; configure one with --scanner family:path or in the config`,
      },
    );
  }
  chosen.assertNotHeldElsewhere();
  return chosen;
}

/**
 * Takes the scanner a session on `modality` will use (for badges every reader, or the one named)
 * from the capture loop now, before the session checks the person with the service: a card shown
 * or a finger placed meanwhile is the session's, never a punch. Returns the release; nothing is
 * taken when there is no such scanner (the session says so when it looks for it).
 */
export function reserveScanners(
  rt: { readonly workers: ReadonlyMap<string, ScannerWorker> },
  modality: ScannerModality,
  key?: string,
): () => void {
  let workers: ScannerWorker[] = [];
  try {
    workers = modality === 'badge' ? (badgeReaders(rt, key) as ScannerWorker[]) : [workerFor(rt, modality, key)];
  } catch {
    // no such scanner, or held elsewhere: the session's own lookup says which
  }
  const releases = workers.map((w) => w.reserve());
  return () => {
    for (const release of releases) release();
  };
}

/** True once the finger is off the sensor (the eye out of view); false when it stayed for `timeoutMs` (or on abort). */
export async function waitForLift(scanner: Scanner, timeoutMs = 10_000, signal?: AbortSignal): Promise<boolean> {
  const deadline = monotonicMs() + timeoutMs;
  while (monotonicMs() < deadline && !signal?.aborted) {
    if (!(await scanner.waitForPresence({ timeoutMs: 150 }))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** What the person is told, by modality: a finger is placed and lifted, an eye looks and looks away. */
export function promptWords(modality: BiometricModality) {
  const finger = modality === 'finger';
  return {
    place: (first: boolean) =>
      finger ? (first ? 'place the finger' : 'place the same finger again') : first ? 'look at the camera' : 'look at the camera again',
    lift: finger ? 'lift your finger' : 'look away from the camera',
    liftAfter: finger ? 'lift it' : 'look away',
    stillThere: finger ? 'the finger is still on the sensor: lift it' : 'still in view: look away from the camera',
    /** What is captured, with its article. */
    one: finger ? 'a finger' : 'an eye',
  };
}

/** A capture and the standard template extracted from it. */
export interface CapturedTemplate {
  format: TemplateFormat;
  data: Uint8Array;
  quality: number;
  image: CapturedImage;
}

/** First word that the image is on its way after this long (a simulator's or an in-module read is quicker). */
const TRAVEL_FIRST_MS = 1000;
/** Then again this often, with the seconds so far. */
const TRAVEL_EVERY_MS = 3000;

/**
 * The scanner's image, saying while it travels: a serial module sends a finger image over its
 * line in 17 to 28 s, and the person is told it is coming rather than left with silence.
 */
export async function captureImageTelling(scanner: Scanner, modality: BiometricModality, progress: Progress): Promise<CapturedImage> {
  const t0 = monotonicMs();
  const what = modality === 'finger' ? 'finger read' : 'eye seen';
  const tell = () =>
    progress({
      step: 'reading',
      seconds: Math.round((monotonicMs() - t0) / 1000),
      message: `${what}: the image is on its way from the scanner (${Math.round((monotonicMs() - t0) / 1000)} s)`,
    });
  let timer = setTimeout(function again() {
    tell();
    timer = setTimeout(again, TRAVEL_EVERY_MS);
  }, TRAVEL_FIRST_MS);
  try {
    return await scanner.captureImage();
  } finally {
    clearTimeout(timer);
  }
}

export interface CaptureOptions {
  signal?: AbortSignal;
  /** An image the capture loop had read when the session took the scanner: used, not waited for. */
  handed?: CapturedImage | null;
  /** Told while the image travels (`captureImageTelling`). */
  progress?: Progress;
}

/**
 * Captures what is presented (a finger already on the sensor is read at once; `ENROLL_TIMEOUT`
 * when none comes within `timeoutMs`) and extracts its standard template.
 */
export async function captureTemplate(
  extractor: Extractor | null,
  scanner: Scanner,
  modality: BiometricModality,
  timeoutMs: number,
  options: CaptureOptions = {},
): Promise<CapturedTemplate> {
  const { signal, handed, progress = () => undefined } = options;
  if (!extractor)
    throw new AgentError(
      'AGENT_NO_EXTRACTOR',
      'image extraction is not available on this terminal',
      {},
      { hint: 'the template key is missing or the models failed to load: run "edge-agent doctor"' },
    );
  if (handed) return { ...(await extractor.extract(modality, handed)), image: handed };
  if (!(await scanner.waitForPresence({ timeoutMs, ...(signal ? { signal } : {}) }))) {
    if (signal?.aborted) throw signal.reason as Error;
    throw new AgentError(
      'ENROLL_TIMEOUT',
      `no ${modality === 'finger' ? 'finger on the sensor' : 'eye in view'} within ${Math.round(timeoutMs / 1000)} s`,
      { modality },
      { hint: 'present it when the scanner asks, then run the command again', retryable: true },
    );
  }
  const image = await captureImageTelling(scanner, modality, progress);
  return { ...(await extractor.extract(modality, image)), image };
}
