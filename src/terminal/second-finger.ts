/**
 * The second-finger step: a finger that left two enrolled persons close (or the best one not sure
 * enough) is no punch and no plain reject when the policy says `policy.secondFinger: on`. The
 * person is asked for another finger (the scanner's `enroll-step` light, a progress line, the
 * log), must lift the first and place another within `policy.secondFingerTimeoutSec`, and both
 * captures are decided together, fused by person among the persons the first left open only
 * (Identifier.identifyAmong). Still not told apart, nothing placed in time or an unusable read:
 * a reject with its reason, never a punch for the wrong person.
 *
 * Used by the scanner worker (a punch) and by on-demand identification (`edge-agent identify`).
 * Tested in test/unit/terminal/second-finger.test.ts and
 * test/integration/several-fingers.test.ts (edge-agent identify in-process; the daemon on a simulated module on a real pty).
 */
import { isScannerGone, type CapturedImage, type Feedback, type Scanner } from '../../drivers/scanner.js';
import { toAgentError } from '../core/errors.js';
import type { Identification } from '../core/identification.js';
import { monotonicMs } from '../core/time.js';
import { compareFingerTemplates } from '../biometrics/finger/matcher.js';
import { decodeFingerTemplate } from '../biometrics/finger/iso19794-2.js';

/** The policy's say on the step (policy.secondFinger, policy.secondFingerTimeoutSec). */
export interface SecondFingerPolicy {
  enabled: boolean;
  timeoutMs: number;
  /** Two captures scoring this much are the same finger (biometrics.fingerThreshold). */
  sameFingerScore: number;
}

export function secondFingerPolicy(config: {
  policy: { secondFinger: 'on' | 'off'; secondFingerTimeoutSec: number };
  biometrics: { fingerThreshold: number };
}): SecondFingerPolicy {
  return {
    enabled: config.policy.secondFinger === 'on',
    timeoutMs: Math.round(config.policy.secondFingerTimeoutSec * 1000),
    sameFingerScore: config.biometrics.fingerThreshold,
  };
}

/** The persons a first finger asks a second one to tell apart, or null when the step does not apply. */
export function secondFingerWanted(ident: Identification | null, policy: SecondFingerPolicy): string[] | null {
  if (!policy.enabled || !ident || ident.decision === 'accept' || ident.modality !== 'finger') return null;
  return ident.between && ident.between.length > 0 ? ident.between : null;
}

export interface SecondFingerOutcome {
  /** The decision on both fingers (accept: the person), or null when no second finger was read. */
  identification: Identification | null;
  /** accept; `ambiguous` (still not told apart), `timeout` (no other finger in time) or `unusable` (the read failed). */
  result: 'accept' | 'ambiguous' | 'timeout' | 'unusable';
  /** Why there is no punch, in a sentence (all but accept). */
  detail?: string;
}

export interface SecondFingerStep {
  scanner: Pick<Scanner, 'waitForPresence' | 'captureImage'>;
  /** The first finger's template. */
  first: Uint8Array;
  /** The persons to tell apart. */
  between: readonly string[];
  timeoutMs: number;
  /** The second finger's template from its image. */
  extract(image: CapturedImage): Promise<Uint8Array>;
  /** The score at which two captures are the same finger (biometrics.fingerThreshold): the same finger again is asked again, it tells nothing new. */
  sameFingerScore: number;
  /** Both fingers decided among `among` (Identifier.identifyAmong). */
  identifyAmong(templates: readonly Uint8Array[], among: readonly string[]): Promise<Identification>;
  feedback(kind: Feedback): Promise<void>;
  /** Told each step (the shape of guided-capture.ts's Progress, not imported: the scanner worker imports this file). */
  progress: (event: Record<string, unknown>) => void;
  signal?: AbortSignal;
}

/** Polling slice while waiting for the first finger to lift. */
const LIFT_POLL_MS = 100;

/** Asks for another finger, reads it within the time, and decides on both (see the module comment). */
export async function runSecondFinger(s: SecondFingerStep): Promise<SecondFingerOutcome> {
  const deadline = monotonicMs() + s.timeoutMs;
  const seconds = Math.round(s.timeoutMs / 1000);
  s.progress({
    step: 'second-finger',
    between: [...s.between],
    timeoutSec: seconds,
    message: `this finger is close to ${s.between.length} enrolled people: lift it and place another finger within ${seconds} s`,
  });
  await s.feedback('enroll-step');
  const first = decodeFingerTemplate(s.first);
  let second: Uint8Array | null = null;
  while (second === null) {
    // The finger on the sensor must go first: a finger still there is not the second one.
    let lifted = false;
    while (!lifted && monotonicMs() < deadline) {
      s.signal?.throwIfAborted();
      lifted = !(await s.scanner.waitForPresence({ timeoutMs: LIFT_POLL_MS, ...(s.signal ? { signal: s.signal } : {}) }));
      if (!lifted) await new Promise((r) => setTimeout(r, LIFT_POLL_MS));
    }
    const left = deadline - monotonicMs();
    const placed = lifted && left > 0 && (await s.scanner.waitForPresence({ timeoutMs: left, ...(s.signal ? { signal: s.signal } : {}) }));
    if (!placed) {
      s.signal?.throwIfAborted();
      const detail = lifted
        ? `no other finger within ${seconds} s: not told apart from one finger, nothing punched`
        : `the finger stayed on the sensor for ${seconds} s: no second finger read, nothing punched`;
      s.progress({ step: 'second-finger', result: 'timeout', message: detail });
      return { identification: null, result: 'timeout', detail };
    }
    s.progress({ step: 'second-finger', read: true, message: 'second finger placed: deciding on both fingers' });
    try {
      second = await s.extract(await s.scanner.captureImage());
    } catch (err) {
      const e = toAgentError(err, 'AGENT_CAPTURE');
      if (isScannerGone(e.code)) throw e;
      const detail = `the second finger could not be read (${e.code}: ${e.message}): nothing punched`;
      s.progress({ step: 'second-finger', result: 'unusable', message: detail });
      return { identification: null, result: 'unusable', detail };
    }
    if (compareFingerTemplates(first, decodeFingerTemplate(second)) >= s.sameFingerScore) {
      // The same finger again tells nothing new: asked again while the time lasts.
      second = null;
      s.progress({ step: 'second-finger', again: true, message: 'that is the same finger again: lift it and place a different finger' });
      await s.feedback('try-again');
    }
  }
  const r = await s.identifyAmong([s.first, second], s.between);
  if (r.decision === 'accept' && r.employeeCode) {
    s.progress({ step: 'second-finger', result: 'accept', employeeCode: r.employeeCode, message: 'told apart by the second finger' });
    return { identification: r, result: 'accept' };
  }
  const detail = 'two fingers still do not tell the close people apart: nothing punched';
  s.progress({ step: 'second-finger', result: 'ambiguous', message: detail });
  return { identification: r, result: 'ambiguous', detail };
}
