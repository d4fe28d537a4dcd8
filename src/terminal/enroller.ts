/**
 * Enrolment, run by the daemon (through the control socket) or by the CLI when no daemon runs:
 *
 *  1. the person must exist in the attendance service (operation 3);
 *  2. three captures, each through the quality gate, then where the module enrols on its own
 *     (serial modules) its presses (R30x 2, GT-521 3) for the module-search path. The total is
 *     announced first, and every press is prompted ("press 2 of 5: place the same finger
 *     again", "lift your finger"); a press not taken (poor, lifted too soon, pressed before the
 *     lift was seen) is asked again, keeping the presses before it, up to three tries a press
 *     (a finger whose every try is under the quality minimum is enrolled with its best try, its
 *     quality noted: a finger is never refused for quality alone);
 *     a module enrolment that fails after its tries keeps the captures (the finger is identified
 *     from images) and says so;
 *  3. each capture is checked 1:N: a finger or eye already enrolled to someone else is refused;
 *  4. a scanner another process holds (the agent's service) is refused at once, naming it, as is
 *     a second enrolment on a scanner already enrolling;
 *  5. the templates replace this person's earlier ones of the same modality and position in the
 *     local cache, are uploaded through operation 4 (each item's outcome shown), and published
 *     to the site.
 *
 * A badge (modality `badge`) is one card read on the badge reader: badge-enroller.ts. Identifying
 * one capture or a template, nothing punched: identify-on-demand.ts.
 *
 * Tested in test/integration/enroll-guided.test.ts (every press prompted, presses asked again, a
 * cancelled enrolment, without extraction, on an R30x, a GT-521 and the iris camera) and
 * test/integration/agent-enroll.test.ts.
 */
import type { ScannerModality } from '../core/modality.js';
import type { AttendanceClient } from '../api/client.js';
import { parseEmployeeCode } from '../api/employee-code.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { ModuleSlots } from '../store/module-slots.js';
import type { NewTemplate, TemplateCache, TemplateFormat } from '../store/template-cache.js';
import { enrollBadge } from './badge-enroller.js';
import type { CredentialHasher } from './credentials.js';
import type { Embedder, Extractor } from './engines.js';
import type { Identifier } from './identifier.js';
import { type CapturedTemplate, captureTemplate, type Progress, promptWords, waitForLift, workerFor } from './guided-capture.js';
import { moduleTemplatesOf, placeModuleTemplates } from './module-cache.js';
import { uploadEnrollment } from './enroll-upload.js';
import type { ScannerWorker } from './scanner-worker.js';

const log = logger('agent:enroll');

/** Tries for one press before the enrolment gives up (a press not taken is asked again, the others kept). */
const TRIES_PER_PRESS = 3;
/** First reminder to lift after this long. */
const LIFT_REMINDER_MS = 4000;

/** Scanners an enrolment is using now: a second one on the same scanner is refused, not queued. */
const enrolling = new WeakSet<ScannerWorker>();

/** The parts of a running terminal that enrolment and identification use (the daemon's runtime). */
export interface EnrollTerminal {
  readonly config: { terminal: { id: string; site: string } };
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
  position: string;
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
  position: string;
  templates: Array<{ id: string; format: string; quality: number | null }>;
  upload: Array<{ statusCode: string; statusDescription: string | null }> | null;
  uploadError: string | null;
  publishedToSite: boolean;
  /** The module's own enrolment failed after its retries (the captures were kept): why. */
  moduleError?: string | null;
}

/** Where an enrolment goes when not told: the right index finger, the right eye, the badge. */
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
  try {
    return await enrollSteps(rt, client, req, report, cancel.signal, scannerKey);
  } finally {
    req.signal?.removeEventListener('abort', cancelled);
  }
}

async function enrollSteps(
  rt: EnrollTerminal,
  client: AttendanceClient | null,
  req: EnrollRequest,
  report: Progress,
  signal: AbortSignal,
  scannerKey?: string,
): Promise<EnrollResult> {
  // Until the captures are done; from storing on the enrolment completes whatever the client does.
  let cancellable = true;
  const progress: Progress = (e) => {
    if (cancellable) signal.throwIfAborted();
    report(e);
  };
  const { modality, position } = req;
  const employeeCode = parseEmployeeCode(req.employeeCode);
  const captures = req.captures ?? 3;
  const minQuality = req.minQuality ?? 40;
  const timeoutMs = req.presenceTimeoutMs ?? 20_000;
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

  const worker = workerFor(rt, modality, scannerKey);
  if (modality === 'badge') return enrollBadge(rt, { employeeCode, name, position, timeoutMs }, progress, worker);
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
  const taken: CapturedTemplate[] = [];
  let moduleTemplate: { format: string; data: Uint8Array } | null = null;
  let moduleError: string | null = null;
  let sensorModel: string | null = null;
  enrolling.add(worker);
  try {
    await worker.withScanner(async (scanner) => {
      sensorModel = (await scanner.info()).model;
      const modulePresses = scanner.capabilities.moduleEnroll ? (scanner.capabilities.moduleEnrollPresses ?? 2) : 0;
      /** Asks to lift after press `press` (once more when it stays), so the next press is a new one. */
      const lift = async (press: number, presses: number) => {
        progress({ step: 'lift', press, presses, message: say.lift });
        if (await waitForLift(scanner, LIFT_REMINDER_MS, signal)) return;
        progress({ step: 'lift', press, presses, again: true, message: say.stillThere });
        if (await waitForLift(scanner, timeoutMs, signal)) return;
        signal.throwIfAborted();
        throw new AgentError(
          'ENROLL_TIMEOUT',
          `${modality === 'finger' ? 'the finger stayed on the sensor' : 'the eye stayed in view'} for ${Math.round((LIFT_REMINDER_MS + timeoutMs) / 1000)} s after press ${press} of ${presses}`,
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
                ...(p.reason ? { again: true } : {}),
                message: p.reason ? say.stillThere : say.lift,
              });
            else
              progress({
                step: 'module',
                action: p.action,
                press,
                presses,
                modulePress: p.press,
                of: p.of,
                ...(p.reason ? { reason: p.reason } : {}),
                message:
                  p.action === 'again'
                    ? `press ${press} of ${presses} again: ${say.place(false)} (the module did not take it: ${p.reason})`
                    : `press ${press} of ${presses}: ${say.place(false)} (the module's own enrolment, ${p.press} of ${p.of})`,
              });
          },
          onStep: (step) => progress({ step: 'module', read: true, press: before + step, presses, modulePress: step, of: modulePresses }),
        });

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
          message: `no image extraction here: enrolling on the module only, ${presses} presses (1 to check the finger is not enrolled yet, ${modulePresses} for the module's own enrolment); ${say.place(true)} when asked and ${say.liftAfter} after each`,
        });
        progress({
          step: 'capture',
          capture: 1,
          of: 1,
          press: 1,
          presses,
          action: 'place',
          message: `press 1 of ${presses}: ${say.place(true)}`,
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
        moduleTemplate = await onModule(1, presses);
        await lift(presses, presses);
        return;
      }

      const presses = captures + modulePresses;
      progress({
        step: 'plan',
        presses,
        captures,
        modulePresses,
        message: `${presses} ${modality === 'finger' ? 'presses' : 'captures'}${modulePresses > 0 ? `: ${captures} captures, then ${modulePresses} for the module's own enrolment` : ''}; ${say.place(true)} when asked and ${say.liftAfter} after each`,
      });
      while (taken.length < captures) {
        const press = taken.length + 1;
        let reason: string | null = null;
        // A finger is never refused for quality alone: the best capture under the gate's minimum
        // over this press's tries is enrolled when no try reaches it, its quality noted.
        let bestLow: CapturedTemplate | null = null;
        const take = async (t: CapturedTemplate, attempt: number): Promise<void> => {
          const dup = await identifier.identify({ modality, template: t.data });
          if (dup.decision === 'accept' && dup.employeeCode && dup.employeeCode !== employeeCode) {
            await scanner.feedback('error').catch(() => undefined);
            throw new AgentError(
              'ENROLL_DUPLICATE',
              `this ${modality} is already enrolled to employee ${dup.employeeCode} (score ${dup.score})`,
              { employeeCode, other: dup.employeeCode, score: dup.score },
              { hint: 'a person is enrolled once: check who is in front of the scanner, or delete the other enrolment first' },
            );
          }
          taken.push(t);
          const low = t.quality < minQuality;
          progress({
            step: 'captured',
            capture: taken.length,
            of: captures,
            press,
            presses,
            quality: t.quality,
            ...(low
              ? {
                  lowQuality: true,
                  message: `press ${press} of ${presses} taken with quality ${t.quality} (under ${minQuality}, the best of ${attempt} tries): a finger is not refused for quality alone`,
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
            action: reason ? 'again' : 'place',
            message: reason
              ? `press ${press} of ${presses} again: ${say.place(press === 1)} (try ${attempt} of ${tries})`
              : `press ${press} of ${presses}: ${say.place(press === 1)}`,
          });
          await scanner.feedback('enroll-step').catch(() => undefined);
          let t: CapturedTemplate | null = null;
          try {
            t = await captureTemplate(rt.extractor, scanner, modality, timeoutMs, signal);
          } catch (err) {
            const e = toAgentError(err);
            if (e.code === 'ENROLL_TIMEOUT' || e.code === 'ENROLL_CANCELLED' || /TRANSPORT|DISCONNECT/.test(e.code)) throw e;
            reason = `not usable: ${e.code}: ${e.message}`;
          }
          if (t && t.quality < minQuality) {
            reason = `quality ${t.quality} is below ${minQuality}`;
            if (modality === 'finger' && (!bestLow || t.quality > bestLow.quality)) bestLow = t;
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
              `press ${press} of ${presses} was not taken in ${tries} tries (last: ${reason}); nothing was stored`,
              { employeeCode, press, presses, tries, captures: taken.length },
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
            attempt,
            tries,
            ...(t ? { quality: t.quality } : {}),
            message: `press ${press} of ${presses} not taken (${reason}); the ${taken.length} taken before are kept`,
          });
          await scanner.feedback('try-again').catch(() => undefined);
          await lift(press, presses);
        }
        await lift(press, presses);
      }
      if (modulePresses > 0) {
        try {
          moduleTemplate = await onModule(captures, presses);
          await lift(presses, presses);
        } catch (err) {
          // The captures are the enrolment (host matching, the service, the site); the module's
          // template only speeds up identification on this module. Keep them.
          if (signal.aborted) throw err;
          const e = toAgentError(err);
          moduleError = `${e.code}: ${e.message}`;
          progress({
            step: 'module',
            error: moduleError,
            message: `the module's own enrolment failed (${moduleError}); the ${taken.length} captures are kept and identify this finger from images; enrol again to put it on the module too`,
          });
          await scanner.feedback('try-again').catch(() => undefined);
          await waitForLift(scanner, LIFT_REMINDER_MS).catch(() => false);
        }
      }
    });
  } finally {
    enrolling.delete(worker);
  }

  progress({ step: 'captures-done', message: 'captures done: the scanner is free again' });
  cancellable = false;
  const version = Date.now();
  const createdAt = new Date(version).toISOString();
  const terminal = rt.config.terminal.id;
  const news: NewTemplate[] = taken.map((t) => ({
    employeeCode,
    modality,
    position,
    format: t.format,
    data: t.data,
    quality: Math.round(t.quality),
    sensorModel,
    createdAt,
    sourceTerminal: terminal,
    version,
  }));
  // The embedding slot (when configured for this modality) keeps the model's vector of each capture.
  if (rt.embedder && rt.embedder.source === modality) {
    for (const t of taken)
      news.push({
        employeeCode,
        modality: 'embedding',
        position,
        format: 'embedding-f32',
        data: await rt.embedder.embed(t.image),
        quality: Math.round(t.quality),
        sensorModel,
        createdAt,
        sourceTerminal: terminal,
        version,
      });
  }
  const mt = moduleTemplate as { format: string; data: Uint8Array } | null;
  if (mt)
    news.push({
      employeeCode,
      modality,
      position,
      format: mt.format as TemplateFormat,
      data: mt.data,
      sensorModel,
      createdAt,
      sourceTerminal: terminal,
      version,
    });
  // Replace this person's earlier templates of the same modality and position.
  for (const old of await rt.cache.listTemplateMeta({ employeeCode })) {
    const sameModality = old.modality === modality || (old.modality === 'embedding' && rt.embedder?.source === modality);
    if (sameModality && old.position === position) await rt.cache.removeTemplate(old.id);
  }
  await rt.cache.upsertUser({ employeeCode, ...(name ? { displayName: name } : {}) });
  const stored = await rt.cache.addTemplates(news);
  progress({ step: 'stored', templates: stored.length });
  log.info({ employeeCode, modality, position, templateCount: stored.length }, 'enrolled');

  const { upload, uploadError } = await uploadEnrollment(client, employeeCode, modality, taken, progress);

  const publishedToSite = await rt.publishPerson(employeeCode);
  if (publishedToSite) progress({ step: 'site', message: `published to site ${rt.config.terminal.site}` });

  if (mt && rt.slots) {
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

  return {
    employeeCode,
    name,
    modality,
    position,
    templates: stored.map((s) => ({ id: s.id, format: s.format, quality: s.quality })),
    upload,
    uploadError,
    publishedToSite,
    moduleError,
  };
}
