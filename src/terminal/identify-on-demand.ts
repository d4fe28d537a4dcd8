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
import { AgentError } from '../core/errors.js';
import type { Identification } from '../core/identification.js';
import type { ScannerModality } from '../core/modality.js';
import { monotonicMs } from '../core/time.js';
import { identifyBadgeOnce } from './badge-enroller.js';
import type { EnrollTerminal } from './enroller.js';
import { captureTemplate, type Progress, waitForLift, workerFor } from './guided-capture.js';

export interface IdentifyOnceResult {
  employeeCode: string | null;
  name: string | null;
  modality: ScannerModality;
  score: number | null;
  decision: 'accept' | 'reject';
  ms: number;
}

/** One capture, identified on the host, nothing punched. */
export async function identifyOnce(
  rt: EnrollTerminal,
  modality: ScannerModality,
  progress: Progress = () => undefined,
  scannerKey?: string,
  timeoutMs = 20_000,
): Promise<IdentifyOnceResult> {
  if (!rt.identifier)
    throw new AgentError(
      'AGENT_NO_TEMPLATE_CACHE',
      'the template cache is not open on this terminal',
      {},
      { hint: 'set a template key (edge-agent provision) and restart' },
    );
  const identifier = rt.identifier;
  const worker = workerFor(rt, modality, scannerKey);
  if (modality === 'badge') return identifyBadgeOnce(rt, worker, progress, timeoutMs);
  return worker.withScanner(async (scanner) => {
    progress({ step: 'capture', message: modality === 'finger' ? 'place the finger' : 'look at the camera' });
    const t0 = monotonicMs();
    const t = await captureTemplate(rt.extractor, scanner, modality, timeoutMs);
    const r = await identifier.identify({ modality, template: t.data });
    await scanner.feedback(r.decision === 'accept' ? 'accepted' : 'unknown').catch(() => undefined);
    await waitForLift(scanner);
    return resultOf(rt, r, modality, Math.round(monotonicMs() - t0));
  });
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
  return { employeeCode: r.employeeCode, name: user?.displayName ?? null, modality, score: r.score, decision: r.decision, ms };
}
