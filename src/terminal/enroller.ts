/**
 * Enrolment, run by the daemon (through the control socket) or by the CLI when no daemon runs:
 *
 *  1. the person must exist in the attendance service (operation 3);
 *  2. three captures, each through the quality gate, then where the module enrols on its own
 *     (serial modules) its presses (R30x 2, GT-521 3) for the module-search path. The total is
 *     announced first, and every press is prompted ("press 2 of 5: place the same finger
 *     again", "lift your finger"); a press not taken (poor, lifted too soon, pressed before the
 *     lift was seen) is asked again, keeping the presses before it, up to three tries a press
 *     (a finger or an eye whose every try is under the quality minimum is enrolled with its best
 *     try, its quality noted: neither is refused for quality alone, only a capture that gives no
 *     template is);
 *     a module enrolment that fails after its tries keeps the captures (the finger is identified
 *     from images) and says so;
 *  3. each capture is checked 1:N: a finger or eye already enrolled to someone else is refused;
 *  4. a scanner another process holds (the agent's service) is refused at once, naming it, as is
 *     a second enrolment on a scanner already enrolling;
 *  5. the templates replace this person's earlier ones of the same modality and position in the
 *     local cache, are uploaded through operation 4 (each item's outcome shown), and published
 *     to the site.
 *
 * Several fingers (`fingers`, `positions`; FINGER_POSITIONS is the order when not named): steps
 * 2-3 run for each finger in turn in one scanner session, each announced ("finger 2 of 2:
 * right-middle"), and a capture that matches a finger taken before in this enrolment is not
 * taken but asked again (ENROLL_SAME_FINGER after three tries); each finger is stored as the
 * person's templates at its position, so identification fuses all of them by person.
 *
 * A badge (modality `badge`) is one card read on the badge reader: badge-enroller.ts. Identifying
 * one capture or a template, nothing punched: identify-on-demand.ts.
 *
 * Tested in test/integration/enroll-guided.test.ts (every press prompted, presses asked again, a
 * cancelled enrolment, without extraction, on an R30x, a GT-521 and the iris camera),
 * test/integration/agent-enroll.test.ts and test/integration/several-fingers.test.ts (two
 * fingers, a repeated finger refused).
 */
import type { ScannerModality } from '../core/modality.js';
import type { AttendanceClient } from '../api/client.js';
import { parseEmployeeCode } from '../api/employee-code.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { scoreLabel } from '../core/identification.js';
import { logger } from '../core/logger.js';
import type { ModuleSlots } from '../store/module-slots.js';
import type { NewTemplate, TemplateCache, TemplateFormat } from '../store/template-cache.js';
import { badgeReaders, enrollBadge } from './badge-enroller.js';
import type { CredentialHasher } from './credentials.js';
import type { Embedder, Extractor } from './engines.js';
import type { Identifier } from './identifier.js';
import {
  type CapturedTemplate,
  captureTemplate,
  type Progress,
  promptWords,
  reserveScanners,
  waitForLift,
  workerFor,
} from './guided-capture.js';
import { moduleTemplatesOf, placeModuleTemplates } from './module-cache.js';
import { uploadEnrollment } from './enroll-upload.js';
import type { ScannerWorker } from './scanner-worker.js';
import { compareFingerTemplates } from '../biometrics/finger/matcher.js';
import { decodeFingerTemplate } from '../biometrics/finger/iso19794-2.js';

const log = logger('agent:enroll');

/** Tries for one press before the enrolment gives up (a press not taken is asked again, the others kept). */
const TRIES_PER_PRESS = 3;
/** First reminder to lift after this long. */
const LIFT_REMINDER_MS = 4000;

/** Scanners an enrolment is using now: a second one on the same scanner is refused, not queued. */
const enrolling = new WeakSet<ScannerWorker>();

/** Captures an enrolment takes and stores per finger or eye: identification decides on the best of them. */
export const ENROLL_CAPTURES = 3;

/** The parts of a running terminal that enrolment and identification use (the daemon's runtime). */
export interface EnrollTerminal {
  readonly config: { terminal: { id: string; site: string }; biometrics?: { fingerThreshold: number } };
  readonly cache: TemplateCache | null;
  readonly identifier: Identifier | null;
  readonly extractor: Extractor | null;
  readonly embedder: Embedder | null;
  readonly slots: ModuleSlots | null;
  readonly workers: ReadonlyMap<string, ScannerWorker>;
  /** Badge credentials' keyed hashes (badge enrolment). */
  readonly credentials?: CredentialHasher | null;
  /** Shares a person's templates with the site; false when site sync is off. */
  publishPerson(employeeCode: string): Promise<boolean>;
}

export interface EnrollRequest {
  employeeCode: string;
  modality: ScannerModality;
  /** The (first) finger position, eye or badge label. */
  position: string;
  /**
   * Fingers to enrol, each a different finger (default 1, or as many as `positions`): each is its
   * own templates of the person at its position. Fingers only.
   */
  fingers?: number;
  /** The finger positions, in the order asked for (the first replaces `position`); missing ones come from FINGER_POSITIONS. */
  positions?: string[];
  /** Captures taken and stored per finger or eye (default ENROLL_CAPTURES). */
  captures?: number;
  /** Minimum extraction quality (0..100) for a capture to count. */
  minQuality?: number;
  presenceTimeoutMs?: number;
  /** Cancels the enrolment (the client went away): nothing is stored, the scanner is freed. */
  signal?: AbortSignal;
}

export interface EnrollResult {
  employeeCode: string;
  name: string | null;
  modality: ScannerModality;
  /** The first position (the only one with one finger). */
  position: string;
  /** Every position enrolled, in the order taken. */
  positions: string[];
  templates: Array<{ id: string; format: string; quality: number | null; position?: string | null }>;
  upload: Array<{ statusCode: string; statusDescription: string | null }> | null;
  uploadError: string | null;
  publishedToSite: boolean;
  /** The module's own enrolment failed after its retries (the captures were kept): why. */
  moduleError?: string | null;
}

/** The order of the fingers asked for when an enrolment of several does not name them. */
export const FINGER_POSITIONS = [
  'right-index',
  'right-middle',
  'left-index',
  'left-middle',
  'right-thumb',
  'left-thumb',
  'right-ring',
  'left-ring',
  'right-little',
  'left-little',
] as const;

/** The most fingers one enrolment takes. */
export const MAX_FINGERS = FINGER_POSITIONS.length;

/**
 * The positions an enrolment of `fingers` fingers takes: the ones named, in their order, then
 * FINGER_POSITIONS without them. An eye or a badge is one position.
 */
export function enrolPositions(modality: ScannerModality, named: readonly string[], fingers?: number): string[] {
  const want = fingers ?? named.length;
  const bad = (message: string, hint: string) =>
    new AgentError('ENROLL_BAD_FINGERS', message, { modality, positions: named, fingers: want }, { hint });
  if (named.length === 0) throw bad('an enrolment names at least one position', 'name the finger, eye or badge label');
  if (modality !== 'finger') {
    if (want !== 1 || named.length !== 1)
      throw bad(
        `one ${modality === 'iris' ? 'eye' : 'badge'} is enrolled at a time`,
        'several positions and --fingers are for fingers only',
      );
    return [...named];
  }
  if (!Number.isInteger(want) || want < 1 || want > MAX_FINGERS)
    throw bad(`an enrolment takes 1 to ${MAX_FINGERS} fingers, not ${want}`, `ask for 1 to ${MAX_FINGERS} fingers`);
  const twice = named.find((p, i) => named.indexOf(p) !== i);
  if (twice) throw bad(`finger ${twice} is named twice: each finger of an enrolment is a different finger`, 'name each finger once');
  if (named.length > want)
    throw bad(`${named.length} positions named for ${want} finger(s)`, 'name as many positions as fingers, or fewer (the rest are chosen)');
  const rest = FINGER_POSITIONS.filter((p) => !named.includes(p));
  return [...named, ...rest.slice(0, want - named.length)];
}

/** Where an enrolment goes when not told: the right index finger, the right eye, the badge. */
/** One finger (or eye) of an enrolment as taken: its captures, its module template or why the module failed. */
interface FingerTaken {
  position: string;
  captures: CapturedTemplate[];
  moduleTemplate: { format: string; data: Uint8Array } | null;
  moduleError: string | null;
}

export function defaultPosition(modality: ScannerModality): string {
  return modality === 'iris' ? 'right' : modality === 'badge' ? 'badge' : 'right-index';
}

export async function enroll(
  rt: EnrollTerminal,
  client: AttendanceClient | null,
  req: EnrollRequest,
  report: Progress = () => undefined,
  scannerKey?: string,
): Promise<EnrollResult> {
  // A cancelled enrolment (its client gone) stops at its next step or wait, storing nothing.
  const cancel = new AbortController();
  const cancelled = () =>
    cancel.abort(
      new AgentError('ENROLL_CANCELLED', 'the enrolment was cancelled before it finished (the command was stopped); nothing was stored', {
        employeeCode: req.employeeCode,
      }),
    );
  if (req.signal?.aborted) cancelled();
  req.signal?.addEventListener('abort', cancelled, { once: true });
  // The scanner is the enrolment's from now on, while the person is checked with the service too.
  const release = reserveScanners(rt, req.modality, scannerKey);
  try {
    return await enrollSteps(rt, client, req, report, cancel.signal, release, scannerKey);
  } finally {
    release();
    req.signal?.removeEventListener('abort', cancelled);
  }
}

async function enrollSteps(
  rt: EnrollTerminal,
  client: AttendanceClient | null,
  req: EnrollRequest,
  report: Progress,
  signal: AbortSignal,
  freeScanner: () => void,
  scannerKey?: string,
): Promise<EnrollResult> {
  // Until the captures are done; from storing on the enrolment completes whatever the client does.
  let cancellable = true;
  const progress: Progress = (e) => {
    if (cancellable) signal.throwIfAborted();
    report(e);
  };
  const { modality } = req;
  const employeeCode = parseEmployeeCode(req.employeeCode);
  const captures = req.captures ?? ENROLL_CAPTURES;
  const minQuality = req.minQuality ?? 40;
  const timeoutMs = req.presenceTimeoutMs ?? 20_000;
  const positions = enrolPositions(modality, req.positions ?? [req.position], req.fingers);
  const position = positions[0]!;
  if (!rt.cache || !rt.identifier)
    throw new AgentError(
      'AGENT_NO_TEMPLATE_CACHE',
      'the template cache is not open on this terminal',
      {},
      { hint: 'set a template key (edge-agent provision) and restart' },
    );

  let name: string | null = null;
  if (client) {
    progress({ step: 'user', message: `checking ${employeeCode} with the attendance service` });
    const env = await client.getUser(employeeCode);
    if (env.statusCode === 'USER_NOT_AVAILABLE') {
      throw new AgentError(
        'ENROLL_UNKNOWN_USER',
        `the attendance service does not know employee ${employeeCode}`,
        { employeeCode },
        { hint: 'add the person in the attendance service first (operation 1), then enrol' },
      );
    }
    if (env.statusCode !== 'SUCCESS' || !env.returnValue) {
      throw new AgentError(
        'ENROLL_API_ERROR',
        `the attendance service answered ${env.statusCode} for ${employeeCode}: ${env.statusDescription ?? ''}`,
        { employeeCode, statusCode: env.statusCode },
        { hint: 'check the service logs', retryable: true },
      );
    }
    name = `${env.returnValue.firstName} ${env.returnValue.lastName}`.trim();
    progress({ step: 'user', message: `${employeeCode} is ${name}` });
  } else {
    progress({ step: 'user', message: 'no attendance API configured: the person is not checked against the service' });
  }

  if (modality === 'badge')
    return {
      ...(await enrollBadge(rt, { employeeCode, name, position, timeoutMs }, progress, badgeReaders(rt, scannerKey), signal)),
      positions,
    };
  const worker = workerFor(rt, modality, scannerKey);
  if (enrolling.has(worker)) {
    throw new AgentError(
      'AGENT_SCANNER_BUSY',
      `an enrolment is already running on scanner ${worker.key}`,
      { scanner: worker.key },
      { hint: 'wait for it to finish (or stop it with Ctrl-C), then run the command again', retryable: true },
    );
  }
  const identifier = rt.identifier;
  const say = promptWords(modality);
  const tries = TRIES_PER_PRESS;
  const fingers = positions.length;
  const sameFingerScore = rt.config.biometrics?.fingerThreshold ?? 40;
  /** Per finger (one for an eye), in the order taken: its captures and its module template. */
  const taken: FingerTaken[] = [];
  let sensorModel: string | null = null;
  enrolling.add(worker);
  try {
    await worker.withScanner(async (scanner, handedRead) => {
      // What the capture loop was reading as the enrolment took the scanner is its first press.
      let handed = handedRead?.image ?? null;
      sensorModel = (await scanner.info()).model;
      const modulePresses = scanner.capabilities.moduleEnroll ? (scanner.capabilities.moduleEnrollPresses ?? 2) : 0;
      /** "press 2 of 5", or with several fingers "finger 2 of 2 (right-middle), press 2 of 5". */
      let fingerNo = 1;
      const at = (press: number, presses: number) =>
        `${fingers > 1 ? `finger ${fingerNo} of ${fingers} (${positions[fingerNo - 1]}), ` : ''}press ${press} of ${presses}`;
      const ofFinger = () => (fingers > 1 ? { finger: fingerNo, fingers, position: positions[fingerNo - 1] } : {});
      /** Asks to lift after press `press` (once more when it stays), so the next press is a new one. */
      const lift = async (press: number, presses: number) => {
        progress({ step: 'lift', press, presses, ...ofFinger(), message: say.lift });
        if (await waitForLift(scanner, LIFT_REMINDER_MS, signal)) return;
        progress({ step: 'lift', press, presses, ...ofFinger(), again: true, message: say.stillThere });
        if (await waitForLift(scanner, timeoutMs, signal)) return;
        signal.throwIfAborted();
        throw new AgentError(
          'ENROLL_TIMEOUT',
          `${modality === 'finger' ? 'the finger stayed on the sensor' : 'the eye stayed in view'} for ${Math.round((LIFT_REMINDER_MS + timeoutMs) / 1000)} s after ${at(press, presses)}`,
          { modality, press, presses },
          { hint: `${say.lift} between presses, then run the command again`, retryable: true },
        );
      };
      /** The module's own enrolment: presses numbered after the `before` ones, each prompted. */
      const onModule = (before: number, presses: number) =>
        scanner.enrollOnModule({
          retries: tries - 1,
          signal,
          onPrompt: (p) => {
            const press = before + p.press;
            if (p.action === 'lift')
              progress({
                step: 'lift',
                press,
                presses,
                ...ofFinger(),
                ...(p.reason ? { again: true } : {}),
                message: p.reason ? say.stillThere : say.lift,
              });
            else
              progress({
                step: 'module',
                action: p.action,
                press,
                presses,
                ...ofFinger(),
                modulePress: p.press,
                of: p.of,
                ...(p.reason ? { reason: p.reason } : {}),
                message:
                  p.action === 'again'
                    ? `${at(press, presses)} again: ${say.place(false)} (the module did not take it: ${p.reason})`
                    : `${at(press, presses)}: ${say.place(false)} (the module's own enrolment, ${p.press} of ${p.of})`,
              });
          },
          onStep: (step) =>
            progress({ step: 'module', read: true, press: before + step, presses, ...ofFinger(), modulePress: step, of: modulePresses }),
        });
      /** Announces finger `f` (1-based) of several: which one, and that it is another finger than the ones before. */
      const nextFinger = (f: number) => {
        fingerNo = f;
        if (fingers < 2) return;
        const before = positions.slice(0, f - 1);
        progress({
          step: 'finger',
          finger: f,
          fingers,
          position: positions[f - 1],
          message: `finger ${f} of ${fingers}: ${positions[f - 1]}${before.length > 0 ? ` (another finger than ${before.join(', ')})` : ''}`,
        });
      };

      if (!rt.extractor) {
        // No image extraction on this terminal (models missing): a serial module still enrols on
        // its own and identifies by its own search, so enrol there only, checking duplicates with
        // the module's search (one press), then the module's presses.
        if (!scanner.capabilities.moduleEnroll) {
          throw new AgentError(
            'AGENT_NO_EXTRACTOR',
            'image extraction is not available on this terminal and this scanner cannot enrol on its own',
            { modality },
            { hint: 'run "edge-agent doctor": the extraction models failed to load' },
          );
        }
        const presses = 1 + modulePresses;
        progress({
          step: 'plan',
          presses,
          captures: 0,
          modulePresses,
          ...(fingers > 1 ? { fingers, positions } : {}),
          message: `no image extraction here: enrolling on the module only, ${fingers > 1 ? `${fingers} fingers (${positions.join(', ')}), ` : ''}${presses} presses${fingers > 1 ? ' each' : ''} (1 to check the finger is not enrolled yet, ${modulePresses} for the module's own enrolment); ${say.place(true)} when asked and ${say.liftAfter} after each`,
        });
        for (let f = 1; f <= fingers; f++) {
          nextFinger(f);
          progress({
            step: 'capture',
            capture: 1,
            of: 1,
            press: 1,
            presses,
            ...ofFinger(),
            action: 'place',
            message: `${at(1, presses)}: ${say.place(true)}`,
          });
          if (!(await scanner.waitForPresence({ timeoutMs, signal }))) {
            signal.throwIfAborted();
            throw new AgentError(
              'ENROLL_TIMEOUT',
              `no finger on the sensor within ${Math.round(timeoutMs / 1000)} s`,
              { modality },
              { hint: 'present it when the scanner asks, then run the command again', retryable: true },
            );
          }
          const hit = await scanner.searchOnModule();
          const owner = hit && rt.slots ? await rt.slots.owner(worker.key, hit.slot) : null;
          if (owner && owner !== employeeCode) {
            await scanner.feedback('error').catch(() => undefined);
            throw new AgentError(
              'ENROLL_DUPLICATE',
              `this finger is already enrolled to employee ${owner} (module slot ${hit!.slot})`,
              { employeeCode, other: owner },
              { hint: 'a person is enrolled once: check who is in front of the scanner, or delete the other enrolment first' },
            );
          }
          await lift(1, presses);
          const moduleTemplate = await onModule(1, presses);
          await lift(presses, presses);
          taken.push({ position: positions[f - 1]!, captures: [], moduleTemplate, moduleError: null });
        }
        return;
      }

      const presses = captures + modulePresses;
      progress({
        step: 'plan',
        presses,
        captures,
        modulePresses,
        ...(fingers > 1 ? { fingers, positions } : {}),
        message: `${fingers > 1 ? `${fingers} fingers (${positions.join(', ')}), ` : ''}${presses} ${modality === 'finger' ? 'presses' : 'captures'}${fingers > 1 ? ' each' : ''}${modulePresses > 0 ? `: ${captures} captures, then ${modulePresses} for the module's own enrolment` : ''}; ${say.place(true)} when asked and ${say.liftAfter} after each`,
      });
      for (let f = 1; f <= fingers; f++) {
        nextFinger(f);
        const finger: FingerTaken = { position: positions[f - 1]!, captures: [], moduleTemplate: null, moduleError: null };
        /** The earlier finger of this enrolment a capture is (the same finger pressed again), else null. */
        const sameAs = (t: CapturedTemplate): string | null => {
          if (modality !== 'finger' || f === 1) return null;
          const probe = decodeFingerTemplate(t.data);
          for (const other of taken)
            for (const c of other.captures)
              if (compareFingerTemplates(probe, decodeFingerTemplate(c.data)) >= sameFingerScore) return other.position;
          return null;
        };
        while (finger.captures.length < captures) {
          const press = finger.captures.length + 1;
          let reason: string | null = null;
          // A finger or an eye is never refused for quality alone: the best capture under the gate's
          // minimum over this press's tries is enrolled when no try reaches it, its quality noted.
          let bestLow: CapturedTemplate | null = null;
          const take = async (t: CapturedTemplate, attempt: number): Promise<void> => {
            const dup = await identifier.identify({ modality, template: t.data });
            if (dup.decision === 'accept' && dup.employeeCode && dup.employeeCode !== employeeCode) {
              await scanner.feedback('error').catch(() => undefined);
              throw new AgentError(
                'ENROLL_DUPLICATE',
                `this ${modality} is already enrolled to employee ${dup.employeeCode} (${scoreLabel(dup.score, modality)})`,
                { employeeCode, other: dup.employeeCode, score: dup.score },
                { hint: 'a person is enrolled once: check who is in front of the scanner, or delete the other enrolment first' },
              );
            }
            finger.captures.push(t);
            const low = t.quality < minQuality;
            progress({
              step: 'captured',
              capture: finger.captures.length,
              of: captures,
              press,
              presses,
              ...ofFinger(),
              quality: t.quality,
              ...(low
                ? {
                    lowQuality: true,
                    message: `${at(press, presses)} taken with quality ${t.quality} (under ${minQuality}, the best of ${attempt} tries): ${say.one} is not refused for quality alone`,
                  }
                : {}),
            });
            await scanner.feedback('accepted').catch(() => undefined);
          };
          for (let attempt = 1; ; attempt++) {
            progress({
              step: 'capture',
              capture: press,
              of: captures,
              press,
              presses,
              ...ofFinger(),
              action: reason ? 'again' : 'place',
              message: reason
                ? `${at(press, presses)} again: ${say.place(press === 1)} (try ${attempt} of ${tries})`
                : `${at(press, presses)}: ${say.place(press === 1)}`,
            });
            await scanner.feedback('enroll-step').catch(() => undefined);
            let t: CapturedTemplate | null = null;
            try {
              t = await captureTemplate(rt.extractor, scanner, modality, timeoutMs, { signal, handed, progress });
              handed = null;
            } catch (err) {
              const e = toAgentError(err);
              if (e.code === 'ENROLL_TIMEOUT' || e.code === 'ENROLL_CANCELLED' || /TRANSPORT|DISCONNECT/.test(e.code)) throw e;
              reason = `not usable: ${e.code}: ${e.message}`;
            }
            const again = t ? sameAs(t) : null;
            if (t && again) {
              // The same finger as one taken before in this enrolment: never stored as another position.
              reason = `this is the ${again} finger again, already taken in this enrolment: place the ${finger.position} finger`;
              t = null;
              if (attempt >= tries) {
                await scanner.feedback('error').catch(() => undefined);
                throw new AgentError(
                  'ENROLL_SAME_FINGER',
                  `${at(press, presses)}: the ${again} finger was pressed ${tries} times instead of the ${finger.position} finger; nothing was stored`,
                  { employeeCode, position: finger.position, same: again, tries },
                  {
                    hint: `place the ${finger.position} finger when it is asked for (a different finger from ${again}), then run the command again`,
                  },
                );
              }
            } else if (t && t.quality < minQuality) {
              reason = `quality ${t.quality} is below ${minQuality}`;
              if (!bestLow || t.quality > bestLow.quality) bestLow = t;
            } else if (t) {
              await take(t, attempt);
              break;
            }
            if (attempt >= tries && bestLow) {
              await take(bestLow, attempt);
              break;
            }
            if (attempt >= tries) {
              throw new AgentError(
                'ENROLL_LOW_QUALITY',
                `${at(press, presses)} was not taken in ${tries} tries (last: ${reason}); nothing was stored`,
                { employeeCode, press, presses, tries, captures: finger.captures.length },
                {
                  hint:
                    modality === 'finger'
                      ? 'clean the sensor and the finger, press flat, or enrol another finger; then run the command again'
                      : 'look straight at the camera with eyes wide open, remove glasses; then run the command again',
                },
              );
            }
            progress({
              step: 'retry',
              press,
              presses,
              ...ofFinger(),
              attempt,
              tries,
              ...(again ? { sameFinger: again } : {}),
              ...(t ? { quality: (t as CapturedTemplate).quality } : {}),
              message: `${at(press, presses)} not taken (${reason}); the ${finger.captures.length} taken before are kept`,
            });
            await scanner.feedback('try-again').catch(() => undefined);
            await lift(press, presses);
          }
          await lift(press, presses);
        }
        if (modulePresses > 0) {
          try {
            finger.moduleTemplate = await onModule(captures, presses);
            await lift(presses, presses);
          } catch (err) {
            // The captures are the enrolment (host matching, the service, the site); the module's
            // template only speeds up identification on this module. Keep them.
            if (signal.aborted) throw err;
            const e = toAgentError(err);
            finger.moduleError = `${e.code}: ${e.message}`;
            progress({
              step: 'module',
              error: finger.moduleError,
              ...ofFinger(),
              message: `the module's own enrolment failed (${finger.moduleError}); the ${finger.captures.length} captures are kept and identify this finger from images; enrol again to put it on the module too`,
            });
            await scanner.feedback('try-again').catch(() => undefined);
            await waitForLift(scanner, LIFT_REMINDER_MS).catch(() => false);
          }
        }
        taken.push(finger);
      }
    });
  } finally {
    enrolling.delete(worker);
  }

  freeScanner();
  progress({ step: 'captures-done', message: 'captures done: the scanner is free again' });
  cancellable = false;
  const version = Date.now();
  const createdAt = new Date(version).toISOString();
  const terminal = rt.config.terminal.id;
  const common = { employeeCode, sensorModel, createdAt, sourceTerminal: terminal, version };
  // Each finger is its own templates of the person, at its position.
  const news: NewTemplate[] = taken.flatMap((f) =>
    f.captures.map((t) => ({ ...common, modality, position: f.position, format: t.format, data: t.data, quality: Math.round(t.quality) })),
  );
  // The embedding slot (when configured for this modality) keeps the model's vector of each capture.
  if (rt.embedder && rt.embedder.source === modality) {
    for (const f of taken)
      for (const t of f.captures)
        news.push({
          ...common,
          modality: 'embedding',
          position: f.position,
          format: 'embedding-f32',
          data: await rt.embedder.embed(t.image),
          quality: Math.round(t.quality),
        });
  }
  for (const f of taken)
    if (f.moduleTemplate)
      news.push({
        ...common,
        modality,
        position: f.position,
        format: f.moduleTemplate.format as TemplateFormat,
        data: f.moduleTemplate.data,
      });
  // Replace this person's earlier templates of the same modality and positions.
  for (const old of await rt.cache.listTemplateMeta({ employeeCode })) {
    const sameModality = old.modality === modality || (old.modality === 'embedding' && rt.embedder?.source === modality);
    if (sameModality && old.position !== null && positions.includes(old.position)) await rt.cache.removeTemplate(old.id);
  }
  await rt.cache.upsertUser({ employeeCode, ...(name ? { displayName: name } : {}) });
  const stored = await rt.cache.addTemplates(news);
  progress({ step: 'stored', templates: stored.length, ...(fingers > 1 ? { positions } : {}) });
  log.info({ employeeCode, modality, positions, templateCount: stored.length }, 'enrolled');

  const captured = taken.flatMap((f) => f.captures);
  const { upload, uploadError } = await uploadEnrollment(client, employeeCode, modality, captured, progress);

  const publishedToSite = await rt.publishPerson(employeeCode);
  if (publishedToSite) progress({ step: 'site', message: `published to site ${rt.config.terminal.site}` });

  if (taken.some((f) => f.moduleTemplate) && rt.slots) {
    const cache = rt.cache;
    const slots = rt.slots;
    await worker
      .withScanner(async (scanner) =>
        placeModuleTemplates({
          scanner,
          info: await scanner.info(),
          scannerKey: worker.key,
          slots,
          templatesOfFormat: (format) => moduleTemplatesOf(cache, format),
        }),
      )
      .catch((err: unknown) => log.warn({ err: toAgentError(err).toJSON() }, 'module placement after enrolment failed'));
  }

  const moduleErrors = taken.filter((f) => f.moduleError).map((f) => (fingers > 1 ? `${f.position}: ${f.moduleError}` : f.moduleError!));
  return {
    employeeCode,
    name,
    modality,
    position,
    positions,
    templates: stored.map((s) => ({ id: s.id, format: s.format, quality: s.quality, position: s.position })),
    upload,
    uploadError,
    publishedToSite,
    moduleError: moduleErrors.length > 0 ? moduleErrors.join('; ') : null,
  };
}
