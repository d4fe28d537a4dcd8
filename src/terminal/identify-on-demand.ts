/**
 * On-demand identification, nothing punched: one capture on a scanner of the terminal
 * (`edge-agent identify`, a badge read for `--modality badge`), or a template given as bytes
 * (`identify --template FILE`, the control socket's identify-template), each identified against
 * this terminal's indexes, with the person's name from the template cache.
 *
 * Tested in test/integration/identify-template.test.ts (a template file identified with and without
 * a running agent) and test/integration/agent-enroll.test.ts (a capture identified after
 * enrolment).
 */
import { AgentError, toAgentError } from '../core/errors.js';
import type { Identification } from '../core/identification.js';
import type { ScannerModality } from '../core/modality.js';
import { monotonicMs } from '../core/time.js';
import { badgeReaders, identifyBadgeOnce } from './badge-enroller.js';
import type { EnrollTerminal } from './enroller.js';
import { captureTemplate, type Progress, waitForLift, workerFor } from './guided-capture.js';
import { runSecondFinger, type SecondFingerOutcome, type SecondFingerPolicy, secondFingerWanted } from './second-finger.js';

/** Reads of one identification before a failed read (line timeout, unusable image) ends it. */
const READ_ATTEMPTS = 3;

export interface IdentifyOnceResult {
  employeeCode: string | null;
  name: string | null;
  modality: ScannerModality;
  score: number | null;
  decision: 'accept' | 'reject';
  ms: number;
  /** A second finger was asked for (two people close, policy.secondFinger): how it ended. */
  secondFinger?: SecondFingerOutcome['result'];
  /** Why a second finger did not decide (secondFinger other than accept). */
  detail?: string;
  /** The score the decision needed, where it moves with the gallery's size (irises: Identification.needed). */
  needed?: number;
}

/**
 * One capture, identified on the host, nothing punched. The scanner is taken from the capture
 * loop for the whole of it: a finger already on the sensor (or an image already on its way) is
 * the one identified, and never a punch. `signal` (the command went away) gives it back.
 */
export async function identifyOnce(
  rt: EnrollTerminal,
  modality: ScannerModality,
  progress: Progress = () => undefined,
  scannerKey?: string,
  timeoutMs = 20_000,
  signal?: AbortSignal,
  secondFinger: SecondFingerPolicy = { enabled: false, timeoutMs: 0, sameFingerScore: 40 },
): Promise<IdentifyOnceResult> {
  if (!rt.identifier)
    throw new AgentError(
      'AGENT_NO_TEMPLATE_CACHE',
      'the template cache is not open on this terminal',
      {},
      { hint: 'set a template key (edge-agent provision) and restart' },
    );
  const identifier = rt.identifier;
  if (modality === 'badge') return identifyBadgeOnce(rt, badgeReaders(rt, scannerKey), progress, timeoutMs, signal);
  const worker = workerFor(rt, modality, scannerKey);
  const session = worker.withScanner(async (scanner, handed) => {
    const t0 = monotonicMs();
    let image = handed?.image ?? null;
    progress({
      step: image ? 'read' : 'capture',
      scanner: worker.key,
      message: image
        ? `${modality === 'finger' ? 'the finger' : 'the eye'} on scanner ${worker.key} was read: identifying`
        : `${modality === 'finger' ? 'place the finger' : 'look at the camera'} (scanner ${worker.key})`,
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const t = await captureTemplate(rt.extractor, scanner, modality, timeoutMs, {
          handed: image,
          progress,
          ...(signal ? { signal } : {}),
        });
        let r = await identifier.identify({ modality, template: t.data });
        const between = secondFingerWanted(r, secondFinger);
        let second: SecondFingerOutcome | null = null;
        if (between) {
          // Two people close: another finger decides, among them only (second-finger.ts).
          const extractor = rt.extractor;
          second = await runSecondFinger({
            scanner,
            first: t.data,
            between,
            timeoutMs: secondFinger.timeoutMs,
            sameFingerScore: secondFinger.sameFingerScore,
            extract: async (img) => (await captureTemplate(extractor, scanner, modality, 1000, { handed: img })).data,
            identifyAmong: (templates, among) => identifier.identifyAmong({ modality, templates, among }),
            feedback: (kind) => scanner.feedback(kind).catch(() => undefined),
            progress,
            ...(signal ? { signal } : {}),
          });
          r = second.identification ?? { ...r, decision: 'reject', employeeCode: null, templateId: null };
        }
        await scanner.feedback(r.decision === 'accept' ? 'accepted' : 'unknown').catch(() => undefined);
        await waitForLift(scanner);
        const result = await resultOf(rt, r, modality, Math.round(monotonicMs() - t0));
        return second ? { ...result, secondFinger: second.result, ...(second.detail ? { detail: second.detail } : {}) } : result;
      } catch (err) {
        // A read that failed (a timeout on the line, an unusable image) is read again; a scanner gone,
        // nothing presented or the command stopped ends it.
        const e = toAgentError(err);
        if (signal?.aborted || attempt >= READ_ATTEMPTS || e.code === 'ENROLL_TIMEOUT' || /TRANSPORT|DISCONNECT|NO_EXTRACTOR/.test(e.code))
          throw e;
        image = null;
        progress({ step: 'retry', attempt, message: `the read failed (${e.code}: ${e.message}); reading again` });
      }
    }
  });
  // Taken now: a read under way finishes for this identification, not as a punch.
  if (worker.capturing)
    progress({
      step: 'reading',
      scanner: worker.key,
      message: `scanner ${worker.key} is reading what is on it: that read is this identification's, not a punch`,
    });
  return session;
}

/** The most a template given to `identifyTemplate` may be (an iris code is 1 KB, a finger record less). */
export const MAX_TEMPLATE_BYTES = 16 * 1024;

/**
 * A template given as bytes (ISO 19794-2 / ANSI 378 for fingers, iris-code-v1 for irises),
 * identified against this terminal's indexes, nothing punched: which person a template file is,
 * with the matcher's score. `ms` is the time spent matching.
 */
export async function identifyTemplate(rt: EnrollTerminal, modality: ScannerModality, data: Uint8Array): Promise<IdentifyOnceResult> {
  if (!rt.identifier)
    throw new AgentError(
      'AGENT_NO_TEMPLATE_CACHE',
      'the template cache is not open on this terminal',
      {},
      { hint: 'set a template key (edge-agent provision) and restart' },
    );
  if (data.length === 0 || data.length > MAX_TEMPLATE_BYTES) {
    throw new AgentError(
      'BIOMETRICS_TEMPLATE_MALFORMED',
      `a template is 1 to ${MAX_TEMPLATE_BYTES} bytes, this one is ${data.length}`,
      { bytes: data.length },
      { hint: 'give an ISO 19794-2 finger record or an iris-code-v1 file (edge-agent template extract makes them)' },
    );
  }
  const r = await rt.identifier.identify({ modality, template: data });
  return resultOf(rt, r, modality, Math.round(r.ms * 100) / 100);
}

/** The identifier's answer as the command shows it, with the person's name from the template cache. */
async function resultOf(rt: EnrollTerminal, r: Identification, modality: ScannerModality, ms: number): Promise<IdentifyOnceResult> {
  const user = r.employeeCode && rt.cache ? await rt.cache.getUser(r.employeeCode) : null;
  return {
    employeeCode: r.employeeCode,
    name: user?.displayName ?? null,
    modality,
    score: r.score,
    decision: r.decision,
    ms,
    ...(r.needed !== undefined ? { needed: r.needed } : {}),
  };
}
